import type { FastifyInstance, FastifyRequest } from 'fastify';

import { AppError } from '../lib/errors.js';
import { JSON_BODY_MAX_DEPTH, nestsDeeperThan } from '../lib/text-safety.js';

/** Any instance (the app's is typed by its logger and the zod type provider). */
type ParserHost = Pick<FastifyInstance, 'getDefaultJsonParser' | 'removeContentTypeParser' | 'addContentTypeParser'>;

/**
 * JSON bodies are decoded strictly: bytes that are not UTF-8 are a 400, not text with U+FFFD
 * in place of what the client sent (the lenient default stores a silently altered string).
 * Parsing itself stays fastify's (prototype-poisoning checks included); a body nested deeper
 * than `JSON_BODY_MAX_DEPTH` is a 400 before any route walks it.
 */
// Reusable: a decode without `stream: true` keeps no state between calls.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** `keepText`: hands a route the body's text as received (the gateway forwards it unchanged when it can). */
export function registerJsonParser(app: ParserHost, keepText?: (request: FastifyRequest, text: string) => void): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // Many HTTP clients send `content-type: application/json` on every request, a DELETE or a
    // bodiless POST included: no bytes is no body (a route that needs one says so, naming `body`).
    if ((body as Buffer).length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = STRICT_UTF8.decode(body as Buffer);
    } catch {
      done(bodyError(new AppError('INVALID_UTF8', 'the body is not valid UTF-8', { status: 400, field: 'body' })), undefined);
      return;
    }
    keepText?.(request, text);
    // fastify's default parser answers through the callback; its return value is not a promise here
    void parseJson(request, text, (error: Error | null, value?: unknown) => {
      if (!error && nestsDeeperThan(value, JSON_BODY_MAX_DEPTH)) {
        done(
          bodyError(
            new AppError('BODY_TOO_DEEP', `the JSON body must not nest deeper than ${JSON_BODY_MAX_DEPTH} levels`, {
              status: 400,
              field: 'body',
            }),
          ),
          undefined,
        );
        return;
      }
      done(error, value);
    });
  });
}

/**
 * A body refused while parsing, with the `statusCode` fastify's own errors carry: a plugin with
 * its own error handler (the queue dashboard's) answers it as the 400 it is, not a 500.
 */
function bodyError(error: AppError): AppError & { statusCode: number } {
  return Object.assign(error, { statusCode: error.status });
}
