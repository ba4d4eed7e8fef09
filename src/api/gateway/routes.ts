import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

import type { ConversationRow } from '../../db/repos/conversations.js';
import { AppError } from '../../lib/errors.js';
import { createGatewayAuthHook } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { registerJsonParser } from '../json-body.js';
import { agentSetupOf } from './agent-setup.js';
import type { Answer } from './answer.js';
import { historyKey, sharedPrefix, storableMessage } from './history.js';
import { type ConversationIdentity, type GatewayProvider, identifyConversation } from './identity.js';
import { enforceModelAccess } from './model-access.js';
import { providerOnlyReason, withProviderClip } from './provider-clip.js';
import { relayResponse } from './relay.js';
import { clientHistory, compactionOriginOf, type KeyedRequest, keyHistory, type ParsedRequest, parseRequest } from './request-history.js';
import { activeRowsOf, getConversation, startCompaction, storedKeysOf, syncHistory, waitForCompaction } from './store.js';
import { conversationOf, existingConversationOf, firstKeyOf } from './thread.js';
import {
  isContextOverflow,
  overflowSizes,
  overflowTarget,
  providerError,
  UPSTREAM_KEY_HEADER,
  upstreamHeaders,
  upstreamUrl,
  usesOperatorKey,
} from './upstream.js';
import { buildUpstreamBody, contextRows, isClientBody, withCompactionBeta } from './upstream-body.js';
import { type GatewayWire, historyField, providerOfWire } from './wire.js';

/**
 * Body limit of the gateway's routes: an agent sends its whole history every turn, a few MB
 * for a long session. 32 MB is the Anthropic API's own request limit, so the gateway refuses
 * nothing the provider would take (the rest of the API keeps COMPACTD_MAX_BODY_BYTES).
 */
export const GATEWAY_BODY_BYTES = 32 * 1024 * 1024;

/** How long a request that does not fit the window waits for its compaction before it is sent anyway. */
export const COMPACTION_WAIT_MS = 120_000;

/** Response header: `compacted` (sent from compactd's context) or `passthrough; reason=…` (sent as the client sent it). */
export const GATEWAY_MODE_HEADER = 'x-compactd-gateway';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const providerOf = (request: FastifyRequest): GatewayProvider => (request.url.startsWith('/gateway/openai') ? 'openai' : 'anthropic');

/**
 * The gateway (SPEC §6.3): the providers' own endpoints under `/gateway/anthropic` and
 * `/gateway/openai`, for agents that only let you set a base URL.
 */
export function gatewayRoutes(deps: ApiDeps): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler((error: FastifyError | AppError, request, reply) => sendGatewayError(request, reply, error));
    app.addHook('onRequest', createGatewayAuthHook(deps.db));
    // the body's text is kept: a context that is the client's own history is forwarded as those bytes
    registerJsonParser(app, (request, text) => rawBodies.set(request, text));
    // The providers' own APIs, in their own shapes (README "Use compactd without changing your
    // agent"): not part of compactd's OpenAPI document, whose errors are problem+json.
    const hidden = { schema: { hide: true } };
    const large = { ...hidden, bodyLimit: GATEWAY_BODY_BYTES };
    const completion = (wire: GatewayWire) => (request: FastifyRequest, reply: FastifyReply) =>
      handleCompletion(deps, wire, request, reply);
    app.post('/gateway/anthropic/v1/messages', large, completion('anthropic'));
    app.post('/gateway/openai/v1/chat/completions', large, completion('openai'));
    app.post('/gateway/openai/v1/responses', large, completion('responses'));
    app.post('/gateway/openai/v1/responses/compact', large, (request, reply) => forwardProviderCompaction(deps, request, reply));
    app.post('/gateway/anthropic/v1/messages/count_tokens', large, (request, reply) => handleCountTokens(deps, request, reply));
    app.get('/gateway/anthropic/v1/models', hidden, (request, reply) => forwardAsIs(deps, 'anthropic', request, reply));
    app.get('/gateway/anthropic/v1/models/:model', hidden, (request, reply) => forwardAsIs(deps, 'anthropic', request, reply));
    app.get('/gateway/openai/v1/models', hidden, (request, reply) => forwardAsIs(deps, 'openai', request, reply));
    app.get('/gateway/openai/v1/models/:model', hidden, (request, reply) => forwardAsIs(deps, 'openai', request, reply));
  };
}

function sendGatewayError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | AppError): FastifyReply | undefined {
  const provider = providerOf(request);
  // the client gave up (closed the connection mid-request): nobody to answer, and not a failure of the gateway
  if (reply.raw.destroyed || request.raw.socket?.destroyed === true) {
    request.log.info({ reason: error.message }, 'gateway client went away before its answer');
    return undefined;
  }
  const status = error instanceof AppError ? error.status : typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 500) request.log.error({ err: error }, 'gateway request failed');
  if (error instanceof AppError && error.retryAfterMs !== undefined)
    void reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
  const field = error instanceof AppError ? error.field : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'body' : undefined;
  const message = status >= 500 ? 'the gateway could not complete the request' : error.message;
  const shaped = providerError(provider, status, message, field);
  return reply.status(shaped.status).send(shaped.body);
}

const rawBodies = new WeakMap<FastifyRequest, string>();
const rawBodyOf = (request: FastifyRequest): string | undefined => rawBodies.get(request);

/** What a request's key memo is charged (key-memo.ts): its body's length. */
const memoWeight = (request: FastifyRequest, parsed: ParsedRequest): number =>
  rawBodyOf(request)?.length ?? JSON.stringify(parsed.history).length;

function prepareUpstream(
  deps: ApiDeps,
  provider: GatewayProvider,
  request: FastifyRequest,
): { url: string; headers: Record<string, string> } {
  const headers = upstreamHeaders(provider, deps.config, request.headers);
  if (!headers) {
    const variable = provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
    throw new AppError(
      'NO_UPSTREAM_KEY',
      `no provider key: compactd has no ${variable} configured and the request has no ${UPSTREAM_KEY_HEADER} header`,
      {
        status: 401,
        field: `headers.${UPSTREAM_KEY_HEADER}`,
      },
    );
  }
  return { url: upstreamUrl(provider, deps.config, request.url.slice(`/gateway/${provider}`.length)), headers };
}

/** A context that opens with a provider's signed compaction block goes with that provider's beta header (SPEC §5.10). */
function betaFor(headers: Record<string, string>, body: Record<string, unknown>): void {
  const beta = withCompactionBeta(body, headers['anthropic-beta']);
  if (beta !== undefined) headers['anthropic-beta'] = beta;
}

async function callUpstream(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
): Promise<Response> {
  try {
    // never follows a redirect: it would carry the provider key to another origin
    return await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal, redirect: 'manual' });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new AppError('UPSTREAM_UNREACHABLE', `the provider could not be reached (${(error as Error).message})`, {
      status: 502,
      cause: error,
    });
  }
}

/** A model id as the providers spell them; anything else is not forwarded into the provider's path. */
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,255}$/;

async function forwardAsIs(deps: ApiDeps, provider: GatewayProvider, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const model = (request.params as { model?: string } | undefined)?.model;
  if (model !== undefined && (!MODEL_ID.test(model) || model.includes('..'))) {
    throw new AppError('INVALID_MODEL', 'model: must be a model id (letters, digits, . _ : @ / -)', { status: 400, field: 'params.model' });
  }
  const { url, headers } = prepareUpstream(deps, provider, request);
  const abort = new AbortController();
  const body = request.method === 'GET' || request.body === undefined ? undefined : JSON.stringify(request.body);
  const upstream = await callUpstream(url, request.method, headers, body, abort.signal);
  return relayResponse(provider, upstream, reply, () => undefined, abort);
}

/**
 * `POST /responses/compact`: the provider compacts the history the client sends and answers
 * the items that replace it (the kept user messages, then its `compaction` item). Forwarded as
 * sent, nothing stored: the client's next request carries the item, which the gateway then
 * stores as the conversation's clip (provider-clip.ts).
 */
async function forwardProviderCompaction(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!isObject(request.body)) throw new AppError('INVALID_BODY', 'the body must be a JSON object', { status: 400, field: 'body' });
  const { url, headers } = prepareUpstream(deps, 'openai', request);
  await enforceModelAccess(deps.db, request.tenantId, 'openai', request.headers, request.body);
  const abort = new AbortController();
  const upstream = await callUpstream(url, 'POST', headers, rawBodyOf(request) ?? JSON.stringify(request.body), abort.signal);
  void reply.header(GATEWAY_MODE_HEADER, 'passthrough; reason=provider-compaction');
  return relayResponse('openai', upstream, reply, () => undefined, abort);
}

/** What the gateway does with a request's history, decided before it is forwarded. */
type Route = { mode: 'compacted'; conversation: ConversationRow } | { mode: 'passthrough'; reason: string; conversation?: ConversationRow };

async function handleCompletion(deps: ApiDeps, wire: GatewayWire, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const provider = providerOfWire(wire);
  const parsed = parseRequest(wire, request.body);
  const identity = identifyConversation(wire, request.headers, parsed.body);
  const { url, headers } = prepareUpstream(deps, provider, request);
  // before anything of the request is stored: a refused model stores nothing
  await enforceModelAccess(deps.db, request.tenantId, provider, request.headers, parsed.body);
  const abort = new AbortController();
  // the client went away before the answer was complete: the provider's work stops too
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });

  // a request only the provider can serve as sent (provider-clip.ts): it compacts, or it holds the history itself
  const providerOnly = providerOnlyReason(wire, parsed.body, parsed.messages);
  if (providerOnly === 'previous-response-id')
    request.log.info({ reason: providerOnly }, 'the provider holds this history (previous_response_id): forwarded as sent, nothing stored');
  const routed: Routed =
    providerOnly === 'previous-response-id'
      ? { route: { mode: 'passthrough', reason: providerOnly }, keyed: null }
      : await routeHistory(deps, wire, request, parsed, identity, abort.signal, providerOnly === null);
  const { keyed } = routed;
  // asked for the provider's compaction: the provider gets what the agent sent; the history is stored all the same
  const route: Route =
    providerOnly === 'provider-compaction' && routed.route.mode === 'compacted'
      ? { mode: 'passthrough', reason: providerOnly, conversation: routed.route.conversation }
      : routed.route;
  void reply.header('x-compactd-conversation', route.conversation?.externalId ?? identity.id);
  // the first build reads the conversation as the append left it; a retry reads it again (its compaction changed it)
  let fresh = true;
  const build = async (): Promise<string> => {
    const client = rawBodyOf(request) ?? JSON.stringify(parsed.body);
    if (route.mode === 'passthrough' || keyed === null) return client;
    const current = fresh
      ? route.conversation
      : ((await getConversation(deps.db, request.tenantId, route.conversation.externalId)) ?? route.conversation);
    fresh = false;
    const upstreamBody = await contextBody(deps, wire, keyed, current);
    if (upstreamBody !== null) betaFor(headers, upstreamBody);
    // nothing compacted yet: the context is the client's body as it sent it, not serialized again
    // (compared with the history as parsed: a Responses `input` string is one user item)
    if (upstreamBody === null || isClientBody(upstreamBody, { ...parsed.body, [historyField(wire)]: parsed.messages }, historyField(wire)))
      return client;
    return JSON.stringify(upstreamBody);
  };
  const firstBody = await build();
  // what the gateway adds before the provider sees the request (body parse, keys, append, context)
  const preparedMs = reply.elapsedTime;
  let upstream = await callUpstream(url, 'POST', headers, firstBody, abort.signal);
  if (route.mode === 'compacted' && (upstream.status === 400 || upstream.status === 413)) {
    const text = await upstream.text();
    upstream = new Response(text, { status: upstream.status, headers: upstream.headers });
    if (isContextOverflow(provider, upstream.status, text)) {
      // the provider counts differently than compactd does: compact now (if the policy and the quotas allow), then try once more
      const sizes = overflowSizes(text);
      const current = (await getConversation(deps.db, request.tenantId, route.conversation.externalId)) ?? route.conversation;
      const started = await startCompaction(
        deps,
        current,
        sizes ? overflowTarget(current.activeTokens, sizes) : Math.floor(current.activeTokens / 2),
      );
      request.log.info({ conversationId: current.externalId, compaction: started }, 'upstream context overflow');
      if ('jobId' in started) {
        await waitForCompaction(deps, current.tenantId, started.jobId, COMPACTION_WAIT_MS, abort.signal);
        upstream = await callUpstream(url, 'POST', headers, await build(), abort.signal);
      }
    }
  }
  void reply.header('server-timing', `gateway;desc="compactd before forwarding";dur=${preparedMs.toFixed(1)}`);
  void reply.header(GATEWAY_MODE_HEADER, route.mode === 'compacted' ? 'compacted' : `passthrough; reason=${route.reason}`);
  const stores = route.mode === 'compacted' || route.reason === 'provider-compaction';
  const onAnswer = (answer: Answer) => {
    if (!stores || keyed === null || route.conversation === undefined) return;
    const conversation = route.conversation;
    const storables = answer.messages.map((message) => storableMessage(wire, message));
    const keys = [...keyed.keys, ...storables.map((storable, index) => historyKey(keyed.history.length + index, storable))];
    const origin = compactionOriginOf(parsed.body, request.headers);
    const client = clientHistory(wire, keyed, { answer: storables, keys, autoCompact: providerOnly === null, origin });
    // stored only where it extends the history this request sent: a client that moved on since keeps its history
    syncHistory(deps, conversation, wire, client, 'extensions', answer.inputTokens).catch((error: unknown) =>
      request.log.warn(
        { err: error, conversationId: conversation.externalId },
        'gateway could not store the answer; the next request stores it',
      ),
    );
  };
  return relayResponse(wire, upstream, reply, onAnswer, abort);
}

/**
 * The request's body with its history replaced by the conversation's context (upstream-body.ts),
 * from the stored rows the client's history shares and the client's own messages after them;
 * null when the client's history differs from the stored one inside its compacted prefix (a
 * concurrent request moved it): that request goes as the client sent it.
 */
async function contextBody(deps: ApiDeps, wire: GatewayWire, keyed: KeyedRequest, conversation: ConversationRow): Promise<Json | null> {
  const stored = withProviderClip(await storedKeysOf(deps.db, conversation), keyed.clipAt);
  const shared = sharedPrefix(keyed.keys, stored.keys);
  if (shared < stored.activeFrom && stored.keys.size > 0) return null;
  const rows = contextRows(await activeRowsOf(deps.db, conversation), shared, keyed.history.length);
  return buildUpstreamBody(wire, keyed.body, keyed.start, keyed.history, rows);
}

/** The route of a request, and its history keyed for the conversation it goes to (null when nothing is stored). */
interface Routed {
  route: Route;
  keyed: KeyedRequest | null;
}

/**
 * Makes the stored conversation follow the client's history (store.ts `syncHistory`: appends
 * what is new, follows a retry, an edit or a rewind). A history compactd cannot follow — it
 * differs inside the compacted prefix — is sent as the client sent it, that request only: the
 * agent keeps working, the response says why (`x-compactd-gateway: passthrough; reason=…`). A
 * request that would not fit the window waits for its compaction (bounded), when the policy
 * and the tenant's quotas allow one; else it goes as it is and the provider answers.
 * `compacts: false` (the request asks the provider to compact): stored, but compactd starts no
 * compaction of its own and nothing waits.
 */
async function routeHistory(
  deps: ApiDeps,
  wire: GatewayWire,
  request: FastifyRequest,
  parsed: ParsedRequest,
  identity: ConversationIdentity,
  signal: AbortSignal,
  compacts: boolean,
): Promise<Routed> {
  if (parsed.history.length === 0) return { route: { mode: 'passthrough', reason: 'no-history' }, keyed: null };
  // a history opening with a provider's compaction is the conversation's continuation, never a thread of it
  const firstKey = parsed.clip ? null : firstKeyOf(wire, parsed.history);
  const origin = compactionOriginOf(parsed.body, request.headers);
  // a native compaction runs on compactd's key: only for requests that use it (the model access was checked)
  const agent = usesOperatorKey(request.headers) ? agentSetupOf(wire, parsed.body) : undefined;
  const memo = { tenantId: request.tenantId, identityId: identity.id, firstKey, weight: memoWeight(request, parsed) };
  let conversation = await conversationOf(deps.db, request.tenantId, identity, firstKey, parsed.body['model']);
  let keyed = await keyHistory(deps.db, wire, parsed, memo, conversation);
  let outcome;
  try {
    outcome = await syncHistory(
      deps,
      conversation,
      wire,
      { ...clientHistory(wire, keyed, { autoCompact: compacts, origin }), agent },
      'rewinds',
    );
    if (outcome.kind === 'not-followed' && outcome.plan.kind === 'other-thread') {
      // another history took the id between the choice of conversation and its lock (two first
      // requests at once): this one belongs in its thread, which the choice now finds
      conversation = await conversationOf(deps.db, request.tenantId, identity, firstKey, parsed.body['model']);
      keyed = await keyHistory(deps.db, wire, parsed, memo, conversation);
      outcome = await syncHistory(
        deps,
        conversation,
        wire,
        { ...clientHistory(wire, keyed, { autoCompact: compacts, origin }), agent },
        'rewinds',
      );
    }
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    request.log.warn(
      { conversationId: conversation.externalId, code: error.code, field: error.field },
      'gateway could not store the history; forwarded as sent',
    );
    return { route: { mode: 'passthrough', reason: 'not-stored', conversation }, keyed };
  }
  if (outcome.kind === 'not-followed') {
    request.log.info(
      { conversationId: conversation.externalId, plan: outcome.plan },
      'gateway history diverges from the stored one; forwarded as sent',
    );
    return {
      route: { mode: 'passthrough', reason: outcome.plan.kind === 'diverged-compacted' ? 'diverged-compacted' : 'diverged', conversation },
      keyed,
    };
  }
  if (outcome.rewound > 0)
    request.log.info(
      { conversationId: conversation.externalId, rewound: outcome.rewound },
      'gateway client went back in its history; the stored history follows it',
    );
  const current = outcome.conversation;
  if (!compacts || current.activeTokens <= current.contextLimit) return { route: { mode: 'compacted', conversation: current }, keyed };
  const started = outcome.compaction ? { jobId: outcome.compaction.id } : await startCompaction(deps, current, undefined, agent);
  if (!('jobId' in started)) {
    request.log.info(
      { conversationId: current.externalId, refused: started.refused },
      'history over the window; no compaction allowed now, forwarded as it is',
    );
    return { route: { mode: 'compacted', conversation: current }, keyed };
  }
  await waitForCompaction(deps, current.tenantId, started.jobId, COMPACTION_WAIT_MS, signal);
  // the compaction rewrote the active history: the context is read as it left it
  return {
    route: { mode: 'compacted', conversation: (await getConversation(deps.db, current.tenantId, current.externalId)) ?? current },
    keyed,
  };
}

/** count_tokens counts what the completion route would send for the same body: the stored context and the new messages, nothing stored. */
async function handleCountTokens(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const parsed = parseRequest('anthropic', request.body);
  const identity = identifyConversation('anthropic', request.headers, parsed.body);
  const firstKey = parsed.clip ? null : firstKeyOf('anthropic', parsed.history);
  const { url, headers } = prepareUpstream(deps, 'anthropic', request);
  await enforceModelAccess(deps.db, request.tenantId, 'anthropic', request.headers, parsed.body);
  const abort = new AbortController();
  const conversation = await existingConversationOf(deps.db, request.tenantId, identity, firstKey);
  const memo = { tenantId: request.tenantId, identityId: identity.id, firstKey, weight: memoWeight(request, parsed) };
  const keyed = conversation ? await keyHistory(deps.db, 'anthropic', parsed, memo, conversation) : null;
  const body = (conversation && keyed ? await contextBody(deps, 'anthropic', keyed, conversation) : null) ?? parsed.body;
  betaFor(headers, body);
  const upstream = await callUpstream(url, 'POST', headers, JSON.stringify(body), abort.signal);
  return relayResponse('anthropic', upstream, reply, () => undefined, abort);
}
