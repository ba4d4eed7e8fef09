import type { IncomingMessage, ServerResponse } from 'node:http';

import { sendJson } from './respond.js';
import { advanceClock, configure, describeSettings, resetState, simNow, type SimState } from './state.js';

/**
 * Control endpoints of llm-sim, for tests and the bench in other processes:
 *   GET  /_sim/health            → {ok: true}
 *   GET  /_sim/calls[?since=ID]  → {calls: [...], inFlight} (bodies, request headers and answer texts with ?bodies=1);
 *                                  each call has `endpoint`, `usage: {input, cacheRead, cacheWrite, output}`
 *                                  (billed, input = uncached) and `compaction` (the kind, or null)
 *   GET  /_sim/config            → current settings
 *   POST /_sim/config {profile?, faults?, seed?, lossRate?, summarizeWindow?, outputRatio?, promptCache?,
 *                      cache?: {enabled?, ttlMs?}, clockOffsetMs?, overrun?: {rate?, factor?}, responseHeaders?}
 *   POST /_sim/reset             → clears the log and the fault script, restarts the PRNG (the prompt cache stays)
 *   GET  /_sim/clock             → {clockOffsetMs, now}: the sim's clock, which cache TTLs follow
 *   POST /_sim/clock {advanceMs} → moves it forward by advanceMs (negative: back); answers as GET
 *   GET  /_sim/cache             → {entries: [{scope, tokens, expiresInMs}]}: the live prompt-cache entries
 *   POST /_sim/cache/clear       → empties the prompt cache
 */
export async function handleControl(
  state: SimState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  body: unknown,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sim');
  const route = `${req.method ?? 'GET'} ${path}`;
  switch (route) {
    case 'GET /_sim/health':
      return sendJson(res, 200, { ok: true });
    case 'GET /_sim/calls': {
      const since = Number(url.searchParams.get('since') ?? 0);
      const withBodies = url.searchParams.get('bodies') === '1';
      const calls = state.calls
        .filter((call) => call.id > since)
        .map((call) => {
          if (withBodies) return call;
          const { body: _body, headers: _headers, answerText: _answerText, ...rest } = call;
          return rest;
        });
      return sendJson(res, 200, { calls, inFlight: state.inFlight });
    }
    case 'GET /_sim/config':
      return sendJson(res, 200, describeSettings(state.settings));
    case 'POST /_sim/config':
      if (typeof body !== 'object' || body === null) return sendJson(res, 400, { error: { message: 'expected a JSON object' } });
      try {
        configure(state, body);
      } catch (error) {
        return sendJson(res, 400, { error: { message: error instanceof Error ? error.message : String(error) } });
      }
      return sendJson(res, 200, describeSettings(state.settings));
    case 'POST /_sim/reset':
      resetState(state);
      res.writeHead(204).end();
      return;
    case 'GET /_sim/clock':
      return sendJson(res, 200, { clockOffsetMs: state.settings.clockOffsetMs, now: simNow(state) });
    case 'POST /_sim/clock': {
      const advance = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['advanceMs'] : undefined;
      try {
        advanceClock(state, advance as number);
      } catch (error) {
        return sendJson(res, 400, { error: { message: error instanceof Error ? error.message : String(error) } });
      }
      return sendJson(res, 200, { clockOffsetMs: state.settings.clockOffsetMs, now: simNow(state) });
    }
    case 'GET /_sim/cache':
      return sendJson(res, 200, { entries: state.cache.describe(simNow(state)) });
    case 'POST /_sim/cache/clear':
      state.cache.clear();
      res.writeHead(204).end();
      return;
    default:
      return sendJson(res, 404, { error: { message: `${route} is not a control endpoint` } });
  }
}
