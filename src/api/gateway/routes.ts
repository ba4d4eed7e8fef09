import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../lib/errors.js';
import { createGatewayAuthHook } from '../auth.js';
import { registerJsonParser } from '../json-body.js';
import type { ApiDeps } from '../deps.js';
import type { Answer } from './answer.js';
import { historyKey, historyStart, planSync, sharedPrefix, storableMessage } from './history.js';
import { identifyConversation, type GatewayProvider } from './identity.js';
import { keysOfHistory, rememberKeys } from './key-memo.js';
import { relayResponse } from './relay.js';
import { activeRowsOf, appendHistory, ensureConversation, getConversation, readActiveRows, readStoredKeys, storedKeysOf, startCompaction, waitForCompaction, type HistoryItem } from './store.js';
import { buildUpstreamBody, isClientBody } from './upstream-body.js';
import { isContextOverflow, overflowSizes, overflowTarget, providerError, UPSTREAM_KEY_HEADER, upstreamHeaders, upstreamUrl } from './upstream.js';
import type { ConversationRow } from '../../db/repos/conversations.js';

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
    const completion = (provider: GatewayProvider) => (request: FastifyRequest, reply: FastifyReply) => handleCompletion(deps, provider, request, reply);
    app.post('/gateway/anthropic/v1/messages', large, completion('anthropic'));
    app.post('/gateway/openai/v1/chat/completions', large, completion('openai'));
    app.post('/gateway/anthropic/v1/messages/count_tokens', large, (request, reply) => handleCountTokens(deps, request, reply));
    app.get('/gateway/anthropic/v1/models', hidden, (request, reply) => forwardAsIs(deps, 'anthropic', request, reply));
    app.get('/gateway/anthropic/v1/models/:model', hidden, (request, reply) => forwardAsIs(deps, 'anthropic', request, reply));
    app.get('/gateway/openai/v1/models', hidden, (request, reply) => forwardAsIs(deps, 'openai', request, reply));
    app.get('/gateway/openai/v1/models/:model', hidden, (request, reply) => forwardAsIs(deps, 'openai', request, reply));
  };
}

function sendGatewayError(request: FastifyRequest, reply: FastifyReply, error: FastifyError | AppError): FastifyReply {
  const provider = providerOf(request);
  const status = error instanceof AppError ? error.status : typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 500) request.log.error({ err: error }, 'gateway request failed');
  const field = error instanceof AppError ? error.field : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'body' : undefined;
  const message = status >= 500 ? 'the gateway could not complete the request' : error.message;
  const shaped = providerError(provider, status, message, field);
  return reply.status(shaped.status).send(shaped.body);
}

interface ParsedRequest {
  body: Json;
  messages: unknown[];
  start: number;
  history: unknown[];
}

interface KeyedRequest extends ParsedRequest {
  /** the history key of each message of `history` (history.ts) */
  keys: string[];
}

function parseRequest(provider: GatewayProvider, raw: unknown): ParsedRequest {
  if (!isObject(raw)) throw new AppError('INVALID_BODY', 'the body must be a JSON object', { status: 400, field: 'body' });
  const messages = raw['messages'];
  if (!Array.isArray(messages)) throw new AppError('INVALID_BODY', 'messages: must be an array', { status: 400, field: 'body.messages' });
  const start = historyStart(provider, messages);
  return { body: raw, messages, start, history: messages.slice(start) };
}

const rawBodies = new WeakMap<FastifyRequest, string>();
const rawBodyOf = (request: FastifyRequest): string | undefined => rawBodies.get(request);

/** Conversation ids are the tenant's own: one tenant's messages never answer for another's. */
const memoId = (request: FastifyRequest, conversationId: string): string => `${request.tenantId}/${conversationId}`;

/** The request's history keys, the messages its conversation's last request already carried not keyed again (key-memo.ts). */
function keyRequest(provider: GatewayProvider, parsed: ParsedRequest, conversationId: string, request: FastifyRequest): KeyedRequest {
  const memo = memoId(request, conversationId);
  const keys = keysOfHistory(memo, provider, parsed.history);
  rememberKeys(memo, provider, parsed.history, keys, rawBodyOf(request)?.length ?? JSON.stringify(parsed.history).length);
  return { ...parsed, keys };
}

function prepareUpstream(deps: ApiDeps, provider: GatewayProvider, request: FastifyRequest): { url: string; headers: Record<string, string> } {
  const headers = upstreamHeaders(provider, deps.config, request.headers);
  if (!headers) {
    const variable = provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
    throw new AppError('NO_UPSTREAM_KEY', `no provider key: compactd has no ${variable} configured and the request has no ${UPSTREAM_KEY_HEADER} header`, {
      status: 401,
      field: `headers.${UPSTREAM_KEY_HEADER}`,
    });
  }
  return { url: upstreamUrl(provider, deps.config, request.url.slice(`/gateway/${provider}`.length)), headers };
}

async function callUpstream(url: string, method: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<Response> {
  try {
    return await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new AppError('UPSTREAM_UNREACHABLE', `the provider could not be reached (${(error as Error).message})`, { status: 502, cause: error });
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

/** What the gateway does with a request's history, decided before it is forwarded. */
type Route = { mode: 'compacted'; conversation: ConversationRow } | { mode: 'passthrough'; reason: string };

async function handleCompletion(deps: ApiDeps, provider: GatewayProvider, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const unkeyed = parseRequest(provider, request.body);
  const identity = identifyConversation(provider, request.headers, unkeyed.body);
  const parsed = keyRequest(provider, unkeyed, identity.id, request);
  const { url, headers } = prepareUpstream(deps, provider, request);
  const abort = new AbortController();
  // the client went away before the answer was complete: the provider's work stops too
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  void reply.header('x-compactd-conversation', identity.id);

  const route = await syncHistory(deps, provider, request, parsed, identity.id, abort.signal);
  // the first build reads the conversation as the append left it; a retry reads it again (its compaction changed it)
  let fresh = true;
  const build = async (): Promise<string> => {
    if (route.mode === 'passthrough') return rawBodyOf(request) ?? JSON.stringify(parsed.body);
    const current = fresh ? route.conversation : ((await getConversation(deps.db, request.tenantId, identity.id)) ?? route.conversation);
    fresh = false;
    const rows = await activeRowsOf(deps.db, current);
    const upstreamBody = buildUpstreamBody(provider, parsed.body, parsed.start, parsed.history, rows);
    // nothing compacted yet: the context is the client's body as it sent it, not serialized again
    const raw = isClientBody(upstreamBody, parsed.body) ? rawBodyOf(request) : undefined;
    return raw ?? JSON.stringify(upstreamBody);
  };
  const firstBody = await build();
  // what the gateway adds before the provider sees the request (body parse, keys, append, context)
  const preparedMs = reply.elapsedTime;
  let upstream = await callUpstream(url, 'POST', headers, firstBody, abort.signal);
  if (route.mode === 'compacted' && (upstream.status === 400 || upstream.status === 413)) {
    const text = await upstream.text();
    if (isContextOverflow(provider, upstream.status, text)) {
      // the provider counts differently than compactd does: compact now, then try once more
      request.log.info({ conversationId: identity.id }, 'upstream context overflow; compacting and retrying once');
      const sizes = overflowSizes(text);
      const current = (await getConversation(deps.db, request.tenantId, identity.id)) ?? route.conversation;
      const jobId = await startCompaction(deps, current, sizes ? overflowTarget(current.activeTokens, sizes) : Math.floor(current.activeTokens / 2));
      await waitForCompaction(deps, route.conversation.tenantId, jobId, COMPACTION_WAIT_MS, abort.signal);
      upstream = await callUpstream(url, 'POST', headers, await build(), abort.signal);
    } else {
      upstream = new Response(text, { status: upstream.status, headers: upstream.headers });
    }
  }
  void reply.header('server-timing', `gateway;desc="compactd before forwarding";dur=${preparedMs.toFixed(1)}`);
  void reply.header(GATEWAY_MODE_HEADER, route.mode === 'compacted' ? 'compacted' : `passthrough; reason=${route.reason}`);
  const onAnswer = (answer: Answer) => {
    if (route.mode !== 'compacted') return;
    const position = parsed.history.length;
    const storable = storableMessage(provider, answer.message);
    const item: HistoryItem = { position, key: historyKey(position, storable), storable };
    appendHistory(deps, route.conversation, provider, [item], answer.inputTokens).catch((error: unknown) =>
      request.log.warn({ err: error, conversationId: identity.id }, 'gateway could not store the answer; the next request stores it'),
    );
  };
  return relayResponse(provider, upstream, reply, onAnswer, abort);
}

/**
 * Stores what compactd does not hold yet of the client's history. A history that does not
 * continue the stored one, or that compactd cannot store (a message over the size limit, a
 * shape it does not take), is sent as the client sent it: the agent keeps working, the
 * response says why (`x-compactd-gateway: passthrough; reason=…`).
 */
async function syncHistory(deps: ApiDeps, provider: GatewayProvider, request: FastifyRequest, parsed: KeyedRequest, conversationId: string, signal: AbortSignal): Promise<Route> {
  if (parsed.history.length === 0) return { mode: 'passthrough', reason: 'no-history' };
  const conversation = await ensureConversation(deps.db, request.tenantId, conversationId, parsed.body['model']);
  const plan = planSync(parsed.keys, await storedKeysOf(deps.db, conversation));
  if (plan.kind === 'diverged') {
    request.log.info({ conversationId, position: plan.position }, 'gateway history diverges from the stored one; forwarded as sent');
    return { mode: 'passthrough', reason: 'diverged' };
  }
  const items = parsed.history.slice(plan.fromPosition).map((message, offset) => ({
    position: plan.fromPosition + offset,
    key: parsed.keys[plan.fromPosition + offset] as string,
    storable: storableMessage(provider, message),
  }));
  let outcome;
  try {
    outcome = await appendHistory(deps, conversation, provider, items);
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    request.log.warn({ conversationId, code: error.code, field: error.field }, 'gateway could not store the history; forwarded as sent');
    return { mode: 'passthrough', reason: 'not-stored' };
  }
  const current = outcome.conversation;
  // Only a request that would not fit the window waits for its compaction (bounded).
  if (current.activeTokens > current.contextLimit) {
    const jobId = outcome.compaction?.id ?? (await startCompaction(deps, current));
    await waitForCompaction(deps, current.tenantId, jobId, COMPACTION_WAIT_MS, signal);
    // the compaction rewrote the active history: the context is read as it left it
    return { mode: 'compacted', conversation: (await getConversation(deps.db, current.tenantId, current.externalId)) ?? current };
  }
  return { mode: 'compacted', conversation: current };
}

/** count_tokens counts what the gateway would send: the stored context and the new messages, nothing stored. */
async function handleCountTokens(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const parsed = parseRequest('anthropic', request.body);
  const identity = identifyConversation('anthropic', request.headers, parsed.body);
  const { url, headers } = prepareUpstream(deps, 'anthropic', request);
  const abort = new AbortController();
  let body = parsed.body;
  const conversation = await getConversation(deps.db, request.tenantId, identity.id);
  if (conversation) {
    const shared = sharedPrefix(keysOfHistory(memoId(request, identity.id), 'anthropic', parsed.history), await readStoredKeys(deps.db, conversation.id));
    if (shared > 0) {
      const rows = await readActiveRows(deps.db, conversation.id);
      // stored rows past the shared prefix (an answer the client has not sent back yet, a turn
      // it rewound) and whatever was appended after them are not part of what it asks about
      const firstAfter = rows.find((row) => row.position !== null && row.position >= shared)?.seq ?? Number.MAX_SAFE_INTEGER;
      const context = rows.filter((row) => row.seq < firstAfter);
      const tail = parsed.history.slice(shared).map((_, offset) => ({ seq: Number.MAX_SAFE_INTEGER, kind: 'message' as const, role: 'user' as const, position: shared + offset, rewritten: false, content: null }));
      body = buildUpstreamBody('anthropic', parsed.body, 0, parsed.history, [...context, ...tail]);
    }
  }
  const upstream = await callUpstream(url, 'POST', headers, JSON.stringify(body), abort.signal);
  return relayResponse('anthropic', upstream, reply, () => undefined, abort);
}
