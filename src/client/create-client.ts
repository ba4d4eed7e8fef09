import { archiveMethods } from './archive.js';
import { conversationMethods } from './conversations.js';
import { jobMethods } from './jobs.js';
import { type ClientOptions, createTransport, type RequestOptions } from './transport.js';
import type { Health } from './types.js';
import { webhookMethods } from './webhooks.js';

export type { ClientOptions, PostOptions, RequestOptions } from './transport.js';

/** A compactd client: one method per route of the HTTP API (SPEC §6), all through one transport. */
export function createClient(options: ClientOptions) {
  const t = createTransport(options);
  return {
    /** `GET /healthz`: the process is up. */
    health: (opts: RequestOptions = {}) => t.get<Health>('/healthz', undefined, { signal: opts.signal }),
    /** `GET /readyz`: Postgres and Redis reachable; a 503 is returned as `{status: 'unavailable', checks}`, not thrown. */
    ready: (opts: RequestOptions = {}) => t.get<Health>('/readyz', undefined, { signal: opts.signal, acceptStatuses: [503] }),
    ...conversationMethods(t),
    ...jobMethods(t),
    ...archiveMethods(t),
    ...webhookMethods(t),
  };
}

export type CompactdClient = ReturnType<typeof createClient>;
