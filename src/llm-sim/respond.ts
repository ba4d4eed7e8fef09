import type { ServerResponse } from 'node:http';

import type { PlannedTiming } from './profiles.js';
import type { SimAnswer, SimRequest } from './types.js';
import type { WireError, WireFormat } from './wire.js';

/** HTTP plumbing of llm-sim: JSON and error bodies, paced SSE, waits that end when the client leaves. */

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  options: { raw?: boolean; headers?: Record<string, string> } = {},
): void {
  if (res.destroyed) return;
  const payload = options.raw === true ? String(body) : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'request-id': `req_sim_${Date.now().toString(36)}`,
    ...options.headers,
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, error: WireError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, error.body, {
    headers: { 'x-should-retry': String(error.status === 429 || error.status >= 500), ...headers },
  });
}

/**
 * Resolves true at `deadline` (a `performance.now()` time), or false as soon as `signal`
 * aborts (the client disconnected or the sim is closing).
 */
export function waitUntil(deadline: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  const delay = deadline - performance.now();
  if (delay <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      resolve(false);
    };
    const timer = Number.isFinite(delay)
      ? setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        }, delay)
      : undefined;
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

// One SSE frame per ~50 ms of output: token-by-token frames would only cost timers.
const FRAME_INTERVAL_MS = 50;

/**
 * Streams an answer on the profile's clock: the start frames at the first token, then the
 * text in slices so that token n leaves at firstToken + (n - 1) / rate, then the end frames.
 */
export async function streamAnswer(
  res: ServerResponse,
  wire: WireFormat,
  request: SimRequest,
  answer: SimAnswer,
  started: number,
  timing: PlannedTiming,
  outputTokensPerSecond: number,
  signal: AbortSignal,
  onFirstToken: (epochMs: number) => void,
): Promise<void> {
  if (!(await waitUntil(started + timing.firstTokenMs, signal))) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  onFirstToken(Date.now());
  for (const frame of wire.streamStart(answer, request)) res.write(frame);
  const tokenCount = answer.usage.outputTokens;
  const perFrame = Number.isFinite(outputTokensPerSecond)
    ? Math.max(1, Math.ceil((outputTokensPerSecond * FRAME_INTERVAL_MS) / 1000))
    : Math.max(1, tokenCount);
  const msPerToken = Number.isFinite(outputTokensPerSecond) ? 1000 / outputTokensPerSecond : 0;
  const firstTokenAt = started + timing.firstTokenMs;
  // Slices are cut by characters in proportion to tokens, so they always join back to the exact text.
  const chars = Array.from(answer.text);
  const frames = Math.max(1, Math.ceil(tokenCount / perFrame));
  const charsPerFrame = Math.ceil(chars.length / frames);
  for (let frame = 0; frame * charsPerFrame < chars.length; frame += 1) {
    if (!(await waitUntil(firstTokenAt + frame * perFrame * msPerToken, signal))) return;
    res.write(wire.streamDelta(answer, chars.slice(frame * charsPerFrame, (frame + 1) * charsPerFrame).join('')));
  }
  if (!(await waitUntil(started + timing.totalMs, signal))) return;
  for (const frame of wire.streamEnd(answer, request)) res.write(frame);
  res.end();
}
