import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Registry } from 'prom-client';

import { presentedToken, tokenEquals } from '../api/credentials.js';

/**
 * `GET /metrics` for a worker-only process (`COMPACTD_METRICS_PORT`), which has no HTTP API
 * of its own; same format and optional bearer token as the API's route.
 */
export async function serveMetrics(
  registry: Registry,
  options: { host: string; port: number; token: string | undefined },
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    void (async () => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      const given = presentedToken(request.headers.authorization);
      if (options.token !== undefined && (given === null || !tokenEquals(given, options.token))) {
        response
          .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="compactd metrics"' })
          .end('unauthorized\n');
        return;
      }
      const body = await registry.metrics();
      response.writeHead(200, { 'content-type': registry.contentType }).end(body);
    })().catch(() => response.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    close: () => (closing ??= new Promise<void>((resolve) => server.close(() => resolve()))),
  };
}
