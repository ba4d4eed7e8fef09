import { z } from 'zod';

import { AppError } from './errors.js';

/**
 * What a failure may say outside the process (a job's `error` in the API and in webhooks):
 * a stable code and a short sentence about what happened. A database error's message is the
 * SQL text and its parameters (drizzle: `Failed query: …\nparams: …`), the driver's message
 * quotes values and names columns: none of that leaves the process. The logs keep the
 * original (through redactError, without parameters).
 */
export interface PublicError {
  code: string;
  message: string;
}

/** Longest message kept from our own errors (AppError, LlmError): a sentence, not a dump. */
export const MAX_PUBLIC_MESSAGE_CHARS = 500;

/** Five characters, at least one a digit (every SQLSTATE has one; `EPIPE` is a socket error). */
const SQLSTATE = /^(?=[A-Z]*[0-9])[0-9A-Z]{5}$/;
const MAX_CAUSES = 5;

/** The SQLSTATE of a Postgres error, or of the one it wraps (drizzle wraps the driver's as `cause`). */
export function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < MAX_CAUSES; depth++) {
    const code = (current as { code?: unknown }).code;
    const isPostgres =
      (current as { name?: unknown }).name === 'PostgresError' || typeof (current as { severity?: unknown }).severity === 'string';
    if (typeof code === 'string' && SQLSTATE.test(code) && isPostgres) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether an error (or one it wraps) carries a query: its text, its values, or the driver's words about them. */
export function carriesQuery(error: unknown): boolean {
  if (sqlStateOf(error) !== undefined) return true;
  let current: unknown = error;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < MAX_CAUSES; depth++) {
    const message = (current as { message?: unknown }).message;
    if ((current as { name?: unknown }).name === 'DrizzleQueryError' || (typeof message === 'string' && message.includes('Failed query:')))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** SQLSTATE classes (or codes) → what the job's owner is told; the first match wins. */
const DATABASE_FAILURES: ReadonlyArray<{ state: RegExp; code: string; message: string }> = [
  { state: /^57014$/, code: 'DATABASE_TIMEOUT', message: 'A database statement took too long and was cancelled.' },
  { state: /^(08|57P)/, code: 'DATABASE_UNAVAILABLE', message: 'The database could not be reached or was shutting down.' },
  {
    state: /^22/,
    code: 'DATABASE_DATA_EXCEPTION',
    message: 'The database refused a value of this job (out of range, too long or malformed).',
  },
  { state: /^23/, code: 'DATABASE_CONSTRAINT_VIOLATION', message: 'The database refused a write that conflicts with data already stored.' },
  {
    state: /^40/,
    code: 'DATABASE_CONFLICT',
    message: 'A database transaction conflicted with another one (serialization failure or deadlock).',
  },
  { state: /^53/, code: 'DATABASE_RESOURCES_EXHAUSTED', message: 'The database ran out of a resource (memory, disk or connections).' },
  {
    state: /^54/,
    code: 'DATABASE_LIMIT_EXCEEDED',
    message: 'A value exceeded a database limit (too large or too complex to store or index).',
  },
];
const DATABASE_ERROR: PublicError = { code: 'DATABASE_ERROR', message: 'A database operation failed.' };

function databaseFailure(state: string): PublicError {
  const failure = DATABASE_FAILURES.find((f) => f.state.test(state));
  return failure ? { code: failure.code, message: failure.message } : DATABASE_ERROR;
}

// Node socket errors and postgres.js connection errors: the database or the queue is out of reach.
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);
const UNREACHABLE: PublicError = { code: 'SERVICE_UNAVAILABLE', message: 'A backing service (database or queue) could not be reached.' };

/** Anything else: a bug or a crash. The worker log has the error under the job's id. */
export const STEP_FAILED: PublicError = {
  code: 'STEP_FAILED',
  message: 'A step of this job failed unexpectedly; the worker log has the details.',
};

const clip = (text: string) => (text.length > MAX_PUBLIC_MESSAGE_CHARS ? `${text.slice(0, MAX_PUBLIC_MESSAGE_CHARS - 1)}…` : text);

function isUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < MAX_CAUSES; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if ((current as { name?: unknown }).name === 'MaxRetriesPerRequestError') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The code and message of a failure as the job's owner sees them. */
export function publicError(error: unknown): PublicError {
  // Our own errors speak for themselves (LlmError is one): their messages are written for people.
  if (error instanceof AppError) return { code: error.code, message: clip(error.message) };
  const state = sqlStateOf(error);
  if (state !== undefined) return databaseFailure(state);
  if (isUnreachable(error)) return UNREACHABLE;
  if (carriesQuery(error)) return DATABASE_ERROR;
  if (error instanceof z.ZodError) {
    const issue = error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return {
      code: 'INVALID_JOB_DATA',
      message: clip(`The job's stored data no longer passes its schema (${where}${issue?.message ?? 'invalid'}).`),
    };
  }
  return STEP_FAILED;
}

/** A stored `{code, message}` as it may be shown: ones recorded before this mapping (a SQLSTATE code, SQL in the message) are rewritten. */
export function publicStoredError(stored: PublicError): PublicError {
  const leaks = SQLSTATE.test(stored.code) || /Failed query:|\nparams: /.test(stored.message);
  if (!leaks) return stored;
  return SQLSTATE.test(stored.code) ? databaseFailure(stored.code) : DATABASE_ERROR;
}
