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

/**
 * drizzle: `Failed query: <sql>\nparams: <values>` → the SQL text only. Postgres data
 * exceptions (SQLSTATE class 22) quote the offending value after a colon
 * (`invalid input syntax for type integer: "…"`): kept up to the colon.
 */
function scrubMessage(message: string, sqlState: unknown): string {
  const at = message.indexOf('\nparams: ');
  const scrubbed = at === -1 ? message : `${message.slice(0, at)}\nparams: ${REDACTED}`;
  return typeof sqlState === 'string' && sqlState.startsWith('22') ? scrubbed.replace(/:\s*"[\s\S]*$/, `: ${REDACTED}`) : scrubbed;
}

/** A plain, loggable copy of an error and its causes, without query values; anything else is returned as it is. */
export function redactError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return error;
  const sqlState = (error as { code?: unknown }).code;
  const message = scrubMessage(error.message, sqlState);
  // No prototype: pino's own err serializer then takes `name` for the type instead of "Object".
  const out: RedactedError = Object.assign(Object.create(null) as RedactedError, { type: error.name, name: error.name, message });
  // The stack's first lines repeat the message: rebuilt from the scrubbed message and the frames only.
  if (typeof error.stack === 'string') {
    const at = error.stack.indexOf(error.message);
    const rest = at === -1 ? error.stack : error.stack.slice(at + error.message.length);
    const frames = rest.split('\n').filter((line) => /^\s+at /.test(line));
    out.stack = [`${error.name}: ${message}`, ...frames].join('\n');
  }
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
