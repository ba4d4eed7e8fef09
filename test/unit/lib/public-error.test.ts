import { DrizzleQueryError } from 'drizzle-orm/errors';
import fc from 'fast-check';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { AppError } from '../../../src/lib/errors.js';
import { carriesQuery, MAX_PUBLIC_MESSAGE_CHARS, publicError, publicStoredError, sqlStateOf } from '../../../src/lib/public-error.js';
import { LlmError } from '../../../src/llm/port.js';

/** A server error as postgres.js builds it from the wire (its own class, the fields it parses). */
function serverError(code: string, message: string, extra: Record<string, unknown> = {}): Error {
  return new postgres.PostgresError({
    severity: 'ERROR',
    severity_local: 'ERROR',
    code,
    message,
    file: 'int.c',
    line: '1',
    routine: 'int4in',
    ...extra,
  } as never);
}

/** drizzle's wrapper around it: the SQL text and every parameter in its message. */
const failedQuery = (query: string, params: unknown[], cause: Error) => new DrizzleQueryError(query, params, cause);

const SECRET = 'whsec_do-not-show-0123456789';
const SQL = 'insert into "batches" ("id", "summary") values ($1, $2)';

describe('publicError', () => {
  it.each([
    ['22003', 'integer out of range', 'DATABASE_DATA_EXCEPTION'],
    ['22P02', `invalid input syntax for type integer: "${SECRET}"`, 'DATABASE_DATA_EXCEPTION'],
    ['23505', 'duplicate key value violates unique constraint "batches_pkey"', 'DATABASE_CONSTRAINT_VIOLATION'],
    ['40001', 'could not serialize access due to concurrent update', 'DATABASE_CONFLICT'],
    ['40P01', 'deadlock detected', 'DATABASE_CONFLICT'],
    ['53200', 'out of memory', 'DATABASE_RESOURCES_EXHAUSTED'],
    ['54000', 'string is too long for tsvector (1300000 bytes, max 1048575 bytes)', 'DATABASE_LIMIT_EXCEEDED'],
    ['57014', 'canceling statement due to statement timeout', 'DATABASE_TIMEOUT'],
    ['57P01', 'terminating connection due to administrator command', 'DATABASE_UNAVAILABLE'],
    ['08006', 'connection failure', 'DATABASE_UNAVAILABLE'],
    ['P0001', 'raised by a trigger', 'DATABASE_ERROR'],
    ['XX000', 'internal error', 'DATABASE_ERROR'],
  ])('maps SQLSTATE %s (%s) to %s, with neither the SQL nor its values', (state, driverMessage, code) => {
    const error = failedQuery(
      SQL,
      ['0b7f3c7e-3f38-4d2c-9b8e-2f4f0a6d1c11', SECRET],
      serverError(state, driverMessage, { detail: `Key (summary)=(${SECRET})`, where: `portal parameter $2 = '${SECRET}'` }),
    );
    // the original says everything: what the log gets
    expect(error.message).toContain(SECRET);
    const shown = publicError(error);
    // exactly these two fields: it is stored as the job's error and sent as it is
    expect(Object.keys(shown).sort()).toEqual(['code', 'message']);
    expect(shown.code).toBe(code);
    expect(JSON.stringify(shown)).not.toMatch(/insert into|batches|\$1|params|Failed query/);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(JSON.stringify(shown)).not.toContain(driverMessage);
    // the driver's error alone (a query run without drizzle) maps the same way
    expect(publicError(serverError(state, driverMessage))).toEqual(shown);
  });

  it('finds the SQLSTATE through the wrappers, and only on errors from the server', () => {
    const wrapped = new Error('finalize failed', { cause: failedQuery(SQL, [], serverError('22003', 'integer out of range')) });
    expect(sqlStateOf(wrapped)).toBe('22003');
    // a five-character code that is not the server's (a socket error, one of ours) is no SQLSTATE
    expect(sqlStateOf(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeUndefined();
    expect(sqlStateOf(Object.assign(new Error('x'), { code: '22003' }))).toBeUndefined();
  });

  it('says a connection the driver lost was a backing service out of reach, not which query it was running', () => {
    const lost = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), {
      code: 'CONNECTION_CLOSED',
      errno: 'CONNECTION_CLOSED',
      address: '127.0.0.1',
      port: 5432,
    });
    expect(publicError(failedQuery(SQL, [SECRET], lost))).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
    expect(publicError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })).code).toBe(
      'SERVICE_UNAVAILABLE',
    );
  });

  it('keeps the code and message of our own errors, clipped to a sentence', () => {
    expect(publicError(new AppError('CONVERSATION_NOT_FOUND', 'conversation x not found', { status: 404 }))).toEqual({
      code: 'CONVERSATION_NOT_FOUND',
      message: 'conversation x not found',
    });
    expect(publicError(new LlmError('rate_limit', 'anthropic 429: slow down'))).toEqual({
      code: 'LLM_RATE_LIMITED',
      message: 'anthropic 429: slow down',
    });
    expect(publicError(new AppError('X', 'y'.repeat(5_000))).message.length).toBeLessThanOrEqual(MAX_PUBLIC_MESSAGE_CHARS);
  });

  it('names the field of stored job data that fails its schema, and says nothing of a crash but that it happened', () => {
    const invalid = z.object({ keepRecent: z.number().max(10) }).safeParse({ keepRecent: 11 });
    expect(publicError(invalid.error)).toMatchObject({ code: 'INVALID_JOB_DATA', message: expect.stringContaining('keepRecent') });
    expect(publicError(new RangeError('Maximum call stack size exceeded'))).toEqual({
      code: 'STEP_FAILED',
      message: expect.stringContaining('worker log'),
    });
    expect(publicError('thrown string')).toMatchObject({ code: 'STEP_FAILED' });
  });

  it('never shows a failed query’s text or values, whatever they are (property)', () => {
    const states = fc.constantFrom(
      '22003',
      '22P02',
      '23505',
      '23503',
      '40001',
      '53100',
      '54000',
      '57014',
      '57P03',
      '08001',
      'XX000',
      'P0001',
      '42P01',
      '0A000',
    );
    fc.assert(
      fc.property(
        fc.string({ minLength: 8 }),
        fc.array(fc.string({ minLength: 8 }), { maxLength: 4 }),
        states,
        fc.string({ minLength: 8 }),
        (query, params, state, driverMessage) => {
          const shown = publicError(failedQuery(`select ${query}`, params, serverError(state, driverMessage)));
          expect(shown.code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
          for (const text of [query, ...params, driverMessage]) expect(shown.message.includes(text)).toBe(false);
          expect(carriesQuery(new Error('x', { cause: failedQuery(query, params, new Error(driverMessage)) }))).toBe(true);
        },
      ),
    );
  });
});

describe('publicStoredError', () => {
  it('rewrites an error stored before the mapping (a SQLSTATE code, a failed query for a message) and leaves public ones alone', () => {
    const old = { code: '22003', message: `Failed query: ${SQL}\nparams: 1,${SECRET}` };
    expect(publicStoredError(old)).toEqual({ code: 'DATABASE_DATA_EXCEPTION', message: expect.not.stringContaining(SECRET) });
    expect(publicStoredError({ code: 'STEP_FAILED', message: `Failed query: ${SQL}\nparams: ${SECRET}` })).toMatchObject({
      code: 'DATABASE_ERROR',
    });
    const mine = { code: 'LLM_FAILED', message: 'chunk 0 could not be summarized' };
    expect(publicStoredError(mine)).toBe(mine);
  });
});
