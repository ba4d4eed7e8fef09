import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './respond.js';
import { configure, describeSettings, resetState, type SimSettingsPatch, type SimState } from './state.js';

/**
 * Control endpoints of llm-sim, for tests and the bench in other processes:
 *   GET  /_sim/health            → {ok: true}
 *   GET  /_sim/calls[?since=ID]  → {calls: [...], inFlight} (bodies and request headers with ?bodies=1)
 *   GET  /_sim/config            → current settings
 *   POST /_sim/config {profile?, faults?, seed?, lossRate?, summarizeWindow?, outputRatio?, promptCache?, overrun?: {rate?, factor?}, responseHeaders?}
 *   POST /_sim/reset             → clears the log and the fault script, restarts the PRNG
 */
export async function handleControl(state: SimState, req: IncomingMessage, res: ServerResponse, path: string, body: unknown): Promise<void> {
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
          const { body: _body, headers: _headers, ...rest } = call;
          return rest;
        });
      return sendJson(res, 200, { calls, inFlight: state.inFlight });
    }
    case 'GET /_sim/config':
      return sendJson(res, 200, describeSettings(state.settings));
    case 'POST /_sim/config':
      if (typeof body !== 'object' || body === null) return sendJson(res, 400, { error: { message: 'expected a JSON object' } });
      try {
        configure(state, body as SimSettingsPatch);
      } catch (error) {
        return sendJson(res, 400, { error: { message: error instanceof Error ? error.message : String(error) } });
      }
      return sendJson(res, 200, describeSettings(state.settings));
    case 'POST /_sim/reset':
      resetState(state);
      res.writeHead(204).end();
      return;
    default:
      return sendJson(res, 404, { error: { message: `${route} is not a control endpoint` } });
  }
}
