/**
 * `compactd/client`: a typed HTTP client for the compactd API. It needs only `fetch`; its
 * types come from the service's own zod schemas (type-only imports, so nothing of the
 * server is loaded at run time).
 *
 *   const compactd = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey });
 *   await compactd.appendMessages('conv-1', [{ role: 'user', content: 'hi' }]);
 *   const { system, messages } = await compactd.getContext('conv-1');
 */
export { type ClientOptions, type CompactdClient, createClient, type PostOptions, type RequestOptions } from './create-client.js';
export { type ClientErrorCode, CompactdError, type FieldError, isCompactdError } from './errors.js';
export { messageFromExportLine } from './export-lines.js';
export { type FetchLike, parseRetryAfter } from './http.js';
export type * from './types.js';
export { isTerminal, TERMINAL_JOB_STATUSES } from './types.js';
export { DEFAULT_WAIT_TIMEOUT_MS, type WaitForJobOptions } from './wait.js';
