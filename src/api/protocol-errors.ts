import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

import { sendProblem } from './problem.js';

/**
 * Errors answered before a route handler runs, in the same RFC 9457 problem+json as every
 * other error: requests the router cannot match (bad percent-encoding, over-long
 * parameters), requests that are not valid HTTP, HTTP/1.1 requests without a Host, and
 * plugins that answer errors in their own JSON (the dashboard).
 */

/**
 * Longest path parameter the router accepts. Conversation ids may be 128 characters
 * (SPEC §6.1); fastify's default of 100 made the longer ones unreachable after creation.
 */
export const MAX_PARAM_LENGTH = 256;

const PROBLEM_BASE = 'https://compactd.dev/problems/';

/** fastify `frameworkErrors`: router failures become problems (fastify answers plain JSON otherwise). */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const known: Record<string, { status: number; code: string }> = {
    FST_ERR_BAD_URL: { status: 400, code: 'BAD_URL' },
    FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: 'URI_TOO_LONG' },
  };
  const mapped = known[error.code] ?? { status: 400, code: 'BAD_REQUEST' };
  void sendProblem(reply, request, { ...mapped, detail: error.message, errors: [{ field: 'url', message: error.message }] });
}

/**
 * fastify `clientErrorHandler`: bytes that are not a valid HTTP request never reach the
 * router, so the answer is written to the socket directly, then the connection is closed.
 */
export function sendClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'the request did not arrive in time']
        : [400, 'MALFORMED_REQUEST', 'the request is not valid HTTP/1.1'];
  const title = STATUS_CODES[status] ?? 'Bad Request';
  const body = JSON.stringify({ type: `${PROBLEM_BASE}${code.toLowerCase().replaceAll('_', '-')}`, title, status, code, detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400. Node's own check answers it with
 * an empty body, so the server turns that check off (`requireHostHeader: false`) and this
 * onRequest hook answers instead.
 */
export async function requireHost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
    await sendProblem(reply, request, {
      status: 400,
      code: 'MISSING_HOST',
      detail: 'an HTTP/1.1 request must carry a Host header',
      errors: [{ field: 'host', message: 'required' }],
    });
  }
}

/**
 * onSend hook for plugins that answer errors in their own JSON (bull-board sends
 * `{error: {key}}`): the same answer as problem+json, keeping the plugin's own fields,
 * which its UI reads.
 */
/** BullMQ's words for an action on a job that is not in the state the action needs. */
const JOB_STATE_CONFLICT = /\bis not in the \w+ state\b/;

export async function foreignErrorsAsProblems(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const contentType = String(reply.getHeader('content-type') ?? '');
  if (reply.statusCode < 400 || contentType.startsWith('application/problem+json') || typeof payload !== 'string') return payload;
  let original: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(payload);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) original = parsed as Record<string, unknown>;
  } catch {
    // not JSON: the problem carries no extra fields
  }
  const key = (original['error'] as { key?: unknown } | undefined)?.key;
  let code = typeof original['code'] === 'string' ? original['code'] : typeof key === 'string' ? key.replace(/^ERRORS\./, '') : 'ERROR';
  // the dashboard answers an action on a job in another state (promote a job that is not
  // delayed) as its internal error: it is the request that conflicts with the job, not a failure
  if (reply.statusCode === 500 && typeof original['message'] === 'string' && JOB_STATE_CONFLICT.test(original['message'])) {
    void reply.status(409);
    code = 'JOB_STATE_CONFLICT';
  }
  const status = reply.statusCode;
  void reply.type('application/problem+json');
  return JSON.stringify({
    ...original,
    type: `${PROBLEM_BASE}${code.toLowerCase().replaceAll('_', '-')}`,
    title: STATUS_CODES[status] ?? 'Error',
    status,
    code,
    instance: request.url,
  });
}
