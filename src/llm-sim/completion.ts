import type { ServerResponse } from 'node:http';

import { requestedLengthTokens } from '../compaction/summarize/index.js';
import { answerWith, type CallContext, type CompletionDeps, MESSAGE_OVERHEAD_TOKENS } from './answer-content.js';
import { type FaultKind, pickFault } from './faults.js';
import { plannedTiming } from './profiles.js';
import { applyPromptCache, type CacheUsage } from './prompt-cache.js';
import { sendError, sendJson, streamAnswer, waitUntil } from './respond.js';
import { type CallRecord, type CallUsage, endCall, recordCall, simNow, type SimState } from './state.js';
import { type SimAnswer, type SimRequest, SimRequestError, type SimUsage } from './types.js';
import type { WireFormat } from './wire.js';

/**
 * One simulated completion call: parse, check the window, draw a fault, read and write the
 * prompt cache, answer (a provider compaction when the request asks for one) on the profile's
 * clock. Cached input skips prefill, as it does at the providers.
 */

/** The API key a call was made with: its organization, for the prompt cache. */
function orgOf(headers: Record<string, string>): string {
  return headers['x-api-key'] ?? headers['authorization']?.replace(/^Bearer\s+/i, '') ?? '';
}

export async function handleCompletion(
  state: SimState,
  wire: WireFormat,
  body: unknown,
  res: ServerResponse,
  closed: AbortSignal,
  deps: CompletionDeps,
  headers: Record<string, string> = {},
): Promise<void> {
  let request: SimRequest;
  try {
    request = wire.parse(body, headers);
  } catch (error) {
    if (!(error instanceof SimRequestError)) throw error;
    sendError(res, wire.error('invalid_request', error.message, error.param, error.errorCode));
    return;
  }
  const messageTokens = request.messages.map((m) => deps.countTokens(m.content) + MESSAGE_OVERHEAD_TOKENS);
  const inputTokens = messageTokens.reduce((sum, tokens) => sum + tokens, 0);
  state.inFlight += 1;
  const record: CallRecord = {
    id: state.nextId++,
    api: request.api,
    endpoint: request.endpoint,
    model: request.model,
    stream: request.stream,
    startMs: Date.now(),
    firstTokenMs: null,
    endMs: null,
    inputTokens,
    outputTokens: 0,
    usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 },
    compaction: null,
    maxTokens: request.maxTokens,
    requestedTokens: requestedLengthTokens(request.messages[request.messages.length - 1]?.content ?? ''),
    overrun: false,
    concurrencyAtStart: state.inFlight,
    stop: null,
    fault: null,
    status: 0,
    outcome: 'pending',
    body,
    headers,
  };
  recordCall(state, record);
  try {
    await answerCall(state, wire, request, record, res, closed, deps, { messageTokens, org: orgOf(headers) });
  } finally {
    endCall(state);
    record.endMs = Date.now();
    if (record.outcome === 'pending') record.outcome = res.writableFinished ? 'ok' : 'disconnected';
  }
}

async function answerCall(
  state: SimState,
  wire: WireFormat,
  request: SimRequest,
  record: CallRecord,
  res: ServerResponse,
  closed: AbortSignal,
  deps: CompletionDeps,
  context: CallContext,
): Promise<void> {
  const { settings } = state;
  const window = settings.summarizeWindow;
  if (window !== undefined && record.inputTokens > window) {
    record.status = 400;
    record.outcome = 'error';
    const message =
      request.api === 'anthropic'
        ? `prompt is too long: ${record.inputTokens} tokens > ${window} maximum`
        : `This model's maximum context length is ${window} tokens. However, your messages resulted in ${record.inputTokens} tokens. Please reduce the length of the messages.`;
    sendError(res, wire.error('context_length_exceeded', message));
    return;
  }
  const fault = pickFault(settings.faults, state.random());
  record.fault = fault;
  // one overrun draw per call, whatever its fault, so the sequence depends only on seed and call order
  record.overrun = state.overrunRandom() < settings.overrun.rate;
  if (fault !== null && (await answerFault(state, wire, fault, record, res, closed))) return;

  const { answer, written } = buildAnswer(state, request, record, fault, deps, context);
  record.usage = billedUsage(answer);
  record.stop = answer.stop;
  record.answerText = answer.text;
  record.outputTokens = record.usage.output;
  // the cached prefix is not prefilled again; what this call writes is readable from its first token
  const timing = plannedTiming(settings.profile, record.inputTokens - record.usage.cacheRead, record.outputTokens);
  state.cache.publish(written, simNow(state) + timing.firstTokenMs);
  const started = performance.now();
  record.status = 200;
  if (fault === 'malformed') {
    if (!(await waitUntil(started + timing.totalMs, closed))) return;
    record.outcome = 'error';
    sendJson(res, 200, JSON.stringify(wire.response(answer, request)).slice(0, 40), { raw: true });
    return;
  }
  if (request.stream) {
    await streamAnswer(res, wire, request, answer, started, timing, settings.profile.outputTokensPerSecond, closed, (at) => {
      record.firstTokenMs = at;
    });
    return;
  }
  if (!(await waitUntil(started + timing.totalMs, closed))) return;
  record.firstTokenMs = Date.now();
  sendJson(res, 200, wire.response(answer, request));
}

/** What the call is billed: every iteration of an answer that compacted, else its usage. */
function billedUsage(answer: SimAnswer): CallUsage {
  const parts: SimUsage[] = answer.iterations ?? [answer.usage];
  const sum = (pick: (usage: SimUsage) => number): number => parts.reduce((total, usage) => total + pick(usage), 0);
  return {
    input: sum((u) => u.inputTokens),
    cacheRead: sum((u) => u.cacheReadTokens),
    cacheWrite: sum((u) => u.cacheWriteTokens),
    output: sum((u) => u.outputTokens),
  };
}

/** Faults answered without a body of text. Returns false for faults that shape the answer instead. */
async function answerFault(
  state: SimState,
  wire: WireFormat,
  fault: FaultKind,
  record: CallRecord,
  res: ServerResponse,
  closed: AbortSignal,
): Promise<boolean> {
  const faults = state.settings.faults;
  const retryAfterMs = faults.retryAfterMs ?? 1_000;
  switch (fault) {
    case 'rate_limit': {
      const header = faults.retryAfterHeader ?? 'both';
      const headers: Record<string, string> = {};
      if (header === 'both' || header === 'seconds') headers['retry-after'] = String(Math.ceil(retryAfterMs / 1000));
      if (header === 'both' || header === 'ms') headers['retry-after-ms'] = String(retryAfterMs);
      return finishError(
        record,
        res,
        wire.error('rate_limit', 'Number of request tokens has exceeded your rate limit (simulated).'),
        headers,
      );
    }
    case 'overloaded':
      return finishError(record, res, wire.error('overloaded', 'Overloaded (simulated).'));
    case 'server_error':
      return finishError(record, res, wire.error('server_error', 'Internal server error (simulated).'));
    case 'auth':
      return finishError(record, res, wire.error('auth', 'invalid x-api-key (simulated).'));
    case 'hang':
      // Like a stuck upstream: nothing is sent until the client gives up (or the sim closes).
      await waitUntil(Infinity, closed);
      record.outcome = 'disconnected';
      return true;
    case 'empty':
    case 'truncated':
    case 'malformed':
      return false;
  }
}

function finishError(
  record: CallRecord,
  res: ServerResponse,
  error: { status: number; body: unknown },
  headers: Record<string, string> = {},
): true {
  record.status = error.status;
  record.outcome = 'error';
  sendError(res, error, headers);
  return true;
}

/** The cache the call reads and writes: the fixed `promptCache` figures when set, else the emulated cache. */
function cacheFor(state: SimState, request: SimRequest, record: CallRecord, deps: CompletionDeps, context: CallContext): CacheUsage {
  const fixed = state.settings.promptCache;
  if (fixed.readTokens > 0 || fixed.writeTokens > 0) {
    const readTokens = Math.min(fixed.readTokens, record.inputTokens);
    return { readTokens, writeTokens: Math.min(fixed.writeTokens, record.inputTokens - readTokens), write1hTokens: 0, written: [] };
  }
  if (!state.settings.cache.enabled) return { readTokens: 0, writeTokens: 0, write1hTokens: 0, written: [] };
  return applyPromptCache({
    store: state.cache,
    org: context.org,
    model: request.model,
    layout: request.layout,
    messageTokens: context.messageTokens,
    overheadTokens: MESSAGE_OVERHEAD_TOKENS,
    countTokens: deps.countTokens,
    ttlMs: state.settings.cache.ttlMs,
    now: simNow(state),
  });
}

function buildAnswer(
  state: SimState,
  request: SimRequest,
  record: CallRecord,
  fault: FaultKind | null,
  deps: CompletionDeps,
  context: CallContext,
): { answer: SimAnswer; written: string[] } {
  const cache = cacheFor(state, request, record, deps, context);
  return { answer: answerWith(state, request, record, fault, deps, context, cache), written: cache.written };
}
