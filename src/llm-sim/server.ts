import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { errorLines, extractIdentifiers, extractPaths } from '../compaction/summarize/index.js';
import { countTokens } from '../lib/count-tokens.js';
import type { CompletionDeps } from './answer-content.js';
import { handleCompletion } from './completion.js';
import { handleControl } from './control.js';
import type { SimFaults } from './faults.js';
import type { LatencyProfile } from './profiles.js';
import { sendJson } from './respond.js';
import {
  advanceClock,
  type CallRecord,
  configure,
  createSimState,
  resetState,
  simNow,
  type SimSettingsPatch,
  type SimState,
  whenIdle,
} from './state.js';
import { SimRequestError } from './types.js';
import type { WireFormat } from './wire.js';
import { anthropicWire } from './wire-anthropic.js';
import { openaiWire } from './wire-openai.js';
import { responsesCompactWire, responsesWire } from './wire-responses.js';

/**
 * `compactd llm-sim` (SPEC §7): a loopback server that speaks the Anthropic Messages API
 * (`POST /v1/messages`), OpenAI Chat Completions (`POST /v1/chat/completions`) and the
 * Responses API (`POST /v1/responses`, `POST /v1/responses/compact`) well enough for the
 * official SDKs and the Claude Code and Codex CLIs, streaming or not, with latency profiles,
 * seeded fault injection, a deterministic seven-section summary, prompt caching as the
 * providers price it (prompt-cache.ts), the providers' compactions (Anthropic on-demand and
 * threshold, OpenAI /responses/compact and compaction_trigger) and a call log under `/_sim/`.
 * Point ANTHROPIC_BASE_URL at `url` and OPENAI_BASE_URL at `${url}/v1`.
 */

export interface LlmSimOptions extends SimSettingsPatch {
  /** default 127.0.0.1 */
  host?: string;
  /** default 0 (any free port) */
  port?: number;
  /** request bodies kept in the call log (most recent calls); default 200 */
  keepBodies?: number;
  /** call records kept; default 100 000 */
  logLimit?: number;
}

export interface LlmSim {
  url: string;
  port: number;
  /** a copy of the call log, oldest first */
  callLog(): CallRecord[];
  setProfile(profile: string | LatencyProfile): void;
  setFaults(faults: SimFaults): void;
  configure(patch: SimSettingsPatch): void;
  /** clears the log and the fault script, restarts the PRNG from the seed (the prompt cache stays) */
  reset(): void;
  /** moves the sim's clock (cache TTLs) by `ms`; returns the offset from the wall clock */
  advanceClock(ms: number): number;
  /** empties the prompt cache of every organization and model */
  clearCache(): void;
  /** the live prompt-cache entries: scope (scheme / organization digest / model), tokens, time left */
  cacheEntries(): Array<{ scope: string; tokens: number; expiresInMs: number }>;
  /** calls being answered right now */
  inFlight(): number;
  /**
   * Stops taking calls, lets the ones in flight finish for up to `graceMs` (default 0),
   * then ends the rest (hanging calls included) and every connection. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function startLlmSim(options: LlmSimOptions = {}): Promise<LlmSim> {
  const state = createSimState(options, { keepBodies: options.keepBodies ?? 200, logLimit: options.logLimit ?? 100_000 });
  const closing = new AbortController();
  const deps: CompletionDeps = { countTokens: (text) => countTokens(text), extractIdentifiers, errorLines, extractPaths };

  const route = createRouter(state, closing.signal, deps);
  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: error instanceof Error ? error.message : String(error) } });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    callLog: () => state.calls.map((call) => ({ ...call })),
    setProfile: (profile) => configure(state, { profile }),
    setFaults: (faults) => configure(state, { faults }),
    configure: (patch) => configure(state, patch),
    reset: () => resetState(state),
    advanceClock: (ms) => advanceClock(state, ms),
    clearCache: () => state.cache.clear(),
    cacheEntries: () => state.cache.describe(simNow(state)),
    inFlight: () => state.inFlight,
    close(graceMs = 0) {
      closed ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (graceMs > 0) await raceTimeout(whenIdle(state), graceMs);
        closing.abort();
        server.closeAllConnections();
        await stopped;
      })();
      return closed;
    },
  };
}

function createRouter(state: SimState, closing: AbortSignal, deps: CompletionDeps) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://sim').pathname.replace(/\/+$/, '');
    if (path.startsWith('/_sim/')) return handleControl(state, req, res, path, await readJson(req));
    for (const [name, value] of Object.entries(state.settings.responseHeaders)) res.setHeader(name, value);
    if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, modelList());
    const wire = req.method === 'POST' ? COMPLETION_ROUTES[path] : undefined;
    if (wire !== undefined) {
      const body = await readJson(req);
      if (body === INVALID_JSON) return sendJson(res, 400, wire.error('invalid_request', 'request body is not valid JSON').body);
      return handleCompletion(state, wire, body, res, callSignal(res, closing), deps, requestHeaders(req));
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens')
      return countTokensRoute(await readJson(req), res, requestHeaders(req));
    sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `${req.method} ${path} is not simulated` } });
  };
}

const COMPLETION_ROUTES: Readonly<Record<string, WireFormat>> = {
  '/v1/messages': anthropicWire,
  '/v1/chat/completions': openaiWire,
  '/v1/responses': responsesWire,
  '/v1/responses/compact': responsesCompactWire,
};

/** The request's headers for the call log, repeated ones joined as HTTP joins them. */
function requestHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

async function raceTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Aborts when the client goes away before the answer is complete, or when the sim closes. */
function callSignal(res: ServerResponse, closing: AbortSignal): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return AbortSignal.any([controller.signal, closing]);
}

/** Counts what the model would read: from a threshold compaction block on; a `compaction` parameter is ignored, as the API does. */
function countTokensRoute(body: unknown, res: ServerResponse, headers: Record<string, string>): void {
  try {
    const { compaction: _ignored, ...fields } = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const parsed = anthropicWire.parse({ max_tokens: 1, ...fields }, headers);
    sendJson(res, 200, { input_tokens: parsed.messages.reduce((sum, m) => sum + countTokens(m.content) + 4, 0) });
  } catch (error) {
    if (!(error instanceof SimRequestError)) throw error;
    sendJson(res, 400, anthropicWire.error('invalid_request', error.message, error.param).body);
  }
}

const INVALID_JSON = Symbol('invalid json');

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return INVALID_JSON;
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return INVALID_JSON;
  }
}

const SIM_MODELS = ['claude-haiku-4-5', 'claude-sonnet-4-5', 'gpt-4o-mini', 'gpt-4.1-mini', 'gemini-2.5-flash'];

/** One list both SDKs accept: Anthropic's page fields and OpenAI's list object together. */
function modelList(): Record<string, unknown> {
  const created = Math.floor(Date.parse('2025-01-01T00:00:00Z') / 1000);
  const data = SIM_MODELS.map((id) => ({
    id,
    object: 'model',
    type: 'model',
    display_name: id,
    created,
    created_at: '2025-01-01T00:00:00Z',
    owned_by: 'llm-sim',
  }));
  return { object: 'list', data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
