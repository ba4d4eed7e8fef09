import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

import { AppError } from '../lib/errors.js';
import { sqlStateOf } from '../lib/public-error.js';
import { redactError } from '../obs/redact-error.js';

/** RFC 9457 problem details; the one shape every error response takes. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  instance?: string;
  errors?: Array<{ field: string; message: string }>;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  problem: Omit<Problem, 'type' | 'title' | 'instance'> & { title?: string },
) {
  const body: Problem = {
    type: `https://compactd.dev/problems/${problem.code.toLowerCase().replaceAll('_', '-')}`,
    title: problem.title ?? TITLES[problem.status] ?? 'Error',
    instance: request.url,
    ...problem,
  };
  return reply.status(problem.status).type('application/problem+json').send(body);
}

/** Maps fastify's own error codes (body parsing, limits, content types) to stable codes. */
const FASTIFY_CODES: Record<string, { status: number; code: string; field?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'BODY_TOO_LARGE', field: 'body' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', field: 'content-type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'INVALID_CONTENT_LENGTH', field: 'content-length' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'EMPTY_JSON_BODY', field: 'body' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'MALFORMED_JSON', field: 'body' },
};

/** The single error handler: AppError → its status; validation → 400 naming fields; else 500 without details. */
export function handleError(error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = (error as FastifyError).validationContext ?? 'body';
    const errors = error.validation.map((v) => ({
      field: [where, ...String(v.instancePath).split('/').filter(Boolean)].join('.'),
      message: v.message ?? 'invalid',
    }));
    return sendProblem(reply, request, { status: 400, code: 'VALIDATION_FAILED', detail: describe(errors), errors });
  }
  if (error instanceof AppError) {
    if (error.status >= 500) request.log.error({ err: redactError(error) }, 'request failed');
    if (error.retryAfterMs !== undefined) void reply.header('retry-after', Math.ceil(error.retryAfterMs / 1000));
    const errors = error.details ?? (error.field ? [{ field: error.field, message: error.message }] : undefined);
    return sendProblem(reply, request, {
      status: error.status,
      code: error.code,
      detail: error.status >= 500 ? 'The server could not complete the request.' : error.message,
      ...(errors && error.status < 500 ? { errors } : {}),
    });
  }
  const fastifyError = error as FastifyError;
  const known = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (known) {
    return sendProblem(reply, request, {
      status: known.status,
      code: known.code,
      detail: error.message,
      ...(known.field ? { errors: [{ field: known.field, message: error.message }] } : {}),
    });
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return sendProblem(reply, request, {
      status: fastifyError.statusCode,
      code: fastifyError.code ?? 'BAD_REQUEST',
      detail: error.message,
    });
  }
  if (hasSqlState(error, FOREIGN_KEY_VIOLATION)) {
    // A row this request writes under (a conversation) was erased by a DELETE that committed first.
    return sendProblem(reply, request, {
      status: 409,
      code: 'RESOURCE_DELETED',
      detail: 'A resource this request refers to was deleted while the request ran.',
    });
  }
  if (hasSqlState(error, QUERY_CANCELED)) {
    // statement_timeout (COMPACTD_API_STATEMENT_TIMEOUT_MS) or a cancel: the database's work for
    // this request was cut short; nothing was changed, the request can be retried.
    request.log.warn({ err: redactError(error) }, 'query canceled');
    void reply.header('retry-after', String(QUERY_TIMEOUT_RETRY_AFTER_S));
    return sendProblem(reply, request, {
      status: 503,
      code: 'QUERY_TIMEOUT',
      detail:
        'The database took too long to answer this request and it was cancelled; retry later, or narrow it (a more specific search, a smaller page).',
    });
  }
  if (isDataException(error)) {
    // Safety net behind the schemas: a value they let through and Postgres cannot hold.
    request.log.warn({ err: redactError(error) }, 'a request value was refused by the database');
    return sendProblem(reply, request, {
      status: 400,
      code: 'VALUE_OUT_OF_RANGE',
      detail: 'A value of this request is out of the range the service can store.',
    });
  }
  if (isDependencyUnavailable(error)) {
    request.log.warn({ err: redactError(error) }, 'a backing service is unavailable');
    void reply.header('retry-after', '1');
    return sendProblem(reply, request, {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      detail: 'A backing service (database or queue) is unavailable; retry shortly.',
    });
  }
  request.log.error({ err: redactError(error) }, 'unhandled error');
  return sendProblem(reply, request, { status: 500, code: 'INTERNAL', detail: 'The server could not complete the request.' });
}

const FOREIGN_KEY_VIOLATION = '23503';
/** query_canceled: statement_timeout, or pg_cancel_backend */
const QUERY_CANCELED = '57014';
const QUERY_TIMEOUT_RETRY_AFTER_S = 5;

/** SQLSTATE class 22 (data exception): a value out of range or malformed for its column. */
export function isDataException(error: unknown): boolean {
  return sqlStateOf(error)?.startsWith('22') ?? false;
}

/** Whether an error (or one it wraps: drizzle wraps the driver's) carries this SQLSTATE. */
function hasSqlState(error: unknown, state: string): boolean {
  let current: unknown = error;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    if ((current as { code?: unknown }).code === state) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

// Node socket errors, postgres.js connection errors, and SQLSTATEs of a server that is down,
// starting or refusing connections (class 08 is matched by prefix).
const UNAVAILABLE_CODES = new Set([
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
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** Whether an error (or one it wraps) says a backing service could not be reached: a 503 to retry, not a 500. */
export function isDependencyUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if ((current as { name?: unknown }).name === 'MaxRetriesPerRequestError') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function describe(errors: Array<{ field: string; message: string }>): string {
  return errors.map((e) => `${e.field}: ${e.message}`).join('; ');
}
