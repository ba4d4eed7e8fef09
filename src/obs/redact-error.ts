/**
 * Errors as they may be logged: never with the values of a query. drizzle's failed-query
 * error prints every parameter in its message (and so its stack) and keeps them in `params`;
 * Postgres errors quote values in `detail` ("Key (…)=(…)") and in `where` ("portal parameter
 * $2 = '…'"). Any of those may be a webhook secret, a message or an API key's hash.
 */

const MAX_CAUSES = 5;
const REDACTED = '[redacted]';
/** properties that hold query values, dropped or censored wherever they appear */
const VALUE_PROPERTIES = new Set(['params', 'parameters', 'args', 'detail', 'where']);

export interface RedactedError {
  type: string;
  message: string;
  stack?: string;
  code?: string;
  [key: string]: unknown;
}

/** drizzle: `Failed query: <sql>\nparams: <values>` → the SQL text only. */
function scrubMessage(message: string): string {
  const at = message.indexOf('\nparams: ');
  return at === -1 ? message : `${message.slice(0, at)}\nparams: ${REDACTED}`;
}

/** A plain, loggable copy of an error and its causes, without query values; anything else is returned as it is. */
export function redactError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return error;
  const message = scrubMessage(error.message);
  const out: RedactedError = { type: error.name, message };
  if (typeof error.stack === 'string') out.stack = scrubMessage(error.stack.replace(error.message, message));
  for (const [key, value] of Object.entries(error)) {
    if (key === 'cause' || key === 'message' || key === 'stack') continue;
    if (VALUE_PROPERTIES.has(key)) {
      if (value !== undefined) out[key] = REDACTED;
      continue;
    }
    // Nested objects may hold anything (a request body, a row): only scalars are kept.
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) out[key] = value;
  }
  if (error.cause !== undefined && depth < MAX_CAUSES) out['cause'] = redactError(error.cause, depth + 1);
  return out;
}
