import type { ServerResponse } from 'node:http';
import { decode, encode } from 'gpt-tokenizer';
import { requestedLengthTokens } from '../compaction/prompt.js';
import { pickFault, type FaultKind } from './faults.js';
import { plannedTiming } from './profiles.js';
import { endCall, recordCall, type CallRecord, type SimState } from './state.js';
import { buildSimSummary } from './summary.js';
import { SimRequestError, type SimAnswer, type SimRequest } from './types.js';
import { sendError, sendJson, streamAnswer, waitUntil } from './respond.js';
import type { WireFormat } from './wire.js';

/** One simulated completion call: parse, check the window, draw a fault, answer on the profile's clock. */

export interface CompletionDeps {
  countTokens: (text: string) => number;
  extractIdentifiers: (text: string) => string[];
  errorLines: (text: string) => string[];
  extractPaths: (text: string) => string[];
}

const MESSAGE_OVERHEAD_TOKENS = 4;
const MIN_OUTPUT_TOKENS = 120;

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
    request = wire.parse(body);
  } catch (error) {
    if (!(error instanceof SimRequestError)) throw error;
    sendError(res, wire.error('invalid_request', error.message, error.param));
    return;
  }
  const inputTokens = request.messages.reduce((sum, m) => sum + deps.countTokens(m.content) + MESSAGE_OVERHEAD_TOKENS, 0);
  state.inFlight += 1;
  const record: CallRecord = {
    id: state.nextId++,
    api: request.api,
    model: request.model,
    stream: request.stream,
    startMs: Date.now(),
    firstTokenMs: null,
    endMs: null,
    inputTokens,
    outputTokens: 0,
    maxTokens: request.maxTokens,
    requestedTokens: requestedLengthTokens(request.messages[request.messages.length - 1]?.content ?? ''),
    overrun: false,
    concurrencyAtStart: state.inFlight,
    fault: null,
    status: 0,
    outcome: 'pending',
    body,
    headers,
  };
  recordCall(state, record);
  try {
    await answerCall(state, wire, request, record, res, closed, deps);
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

  const answer = buildAnswer(state, request, record, fault, deps);
  record.outputTokens = answer.usage.outputTokens;
  const timing = plannedTiming(settings.profile, record.inputTokens, answer.usage.outputTokens);
  const started = performance.now();
  record.status = 200;
  if (fault === 'malformed') {
    if (!(await waitUntil(started + timing.totalMs, closed))) return;
    record.outcome = 'error';
    sendJson(res, 200, JSON.stringify(wire.response(answer)).slice(0, 40), { raw: true });
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
  sendJson(res, 200, wire.response(answer));
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
      return finishError(record, res, wire.error('rate_limit', 'Number of request tokens has exceeded your rate limit (simulated).'), headers);
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

function finishError(record: CallRecord, res: ServerResponse, error: { status: number; body: unknown }, headers: Record<string, string> = {}): true {
  record.status = error.status;
  record.outcome = 'error';
  sendError(res, error, headers);
  return true;
}

function buildAnswer(state: SimState, request: SimRequest, record: CallRecord, fault: FaultKind | null, deps: CompletionDeps): SimAnswer {
  const { settings } = state;
  // A model aims at the length its directive asks for (max_tokens when it names none), shorter
  // when the input is worth less; an overrunning one runs `factor` times past that, and
  // max_tokens stops it there as providers do.
  const asked = record.requestedTokens ?? request.maxTokens;
  const length = Math.min(asked, Math.max(MIN_OUTPUT_TOKENS, Math.round(record.inputTokens * settings.outputRatio)));
  const target = record.overrun ? Math.round(length * settings.overrun.factor) : length;
  let text = '';
  let stop: SimAnswer['stop'] = 'end';
  if (fault !== 'empty') {
    text = buildSimSummary(request.messages, { ...deps, lossRate: settings.lossRate, seed: settings.seed, targetTokens: target }).text;
    let tokens = encode(text);
    // Honour max_tokens like a model would: stop there and say so.
    const limit = fault === 'truncated' ? Math.min(request.maxTokens, Math.max(1, Math.floor(tokens.length / 2))) : request.maxTokens;
    if (tokens.length > limit || fault === 'truncated') {
      tokens = tokens.slice(0, limit);
      text = decode(tokens);
      stop = 'length';
    }
  }
  const cache = settings.promptCache;
  const cacheReadTokens = Math.min(cache.readTokens, record.inputTokens);
  const cacheWriteTokens = Math.min(cache.writeTokens, record.inputTokens - cacheReadTokens);
  return {
    id: request.api === 'anthropic' ? `msg_sim_${record.id}` : `chatcmpl-sim-${record.id}`,
    model: request.model,
    text,
    stop,
    usage: {
      inputTokens: record.inputTokens - cacheReadTokens - cacheWriteTokens,
      outputTokens: text === '' ? 0 : deps.countTokens(text),
      cacheReadTokens,
      cacheWriteTokens,
    },
  };
}
