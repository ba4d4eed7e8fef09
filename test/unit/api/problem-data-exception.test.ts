import { DrizzleQueryError } from 'drizzle-orm/errors';
import Fastify from 'fastify';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';

import { handleError } from '../../../src/api/problem.js';

/**
 * The safety net behind the schemas: a value Postgres refuses as a data exception (class 22)
 * that reaches the error handler is the client's bad input, a 400 problem without the SQL or
 * the value, never a 500. Other database errors stay 500s.
 */

function appThrowing(error: Error) {
  const app = Fastify({ logger: false });
  app.setErrorHandler(handleError);
  app.get('/boom', async () => {
    throw error;
  });
  return app;
}

const failedQuery = (code: string, message: string) =>
  new DrizzleQueryError(
    'select * from "compaction_jobs" where "created_at" < $1',
    ['0000-01-01T00:00:00.000Z'],
    new postgres.PostgresError({ severity: 'ERROR', code, message } as never),
  );

describe('a Postgres data exception reaching the error handler', () => {
  it.each([
    ['22008', 'date/time field value out of range: "0000-01-01T00:00:00.000Z"'],
    ['22003', 'value "99999999999" is out of range for type integer'],
    ['22P02', 'invalid input syntax for type uuid: "x"'],
  ])('%s is a 400 problem that names neither the query nor the value', async (code, message) => {
    const res = await appThrowing(failedQuery(code, message)).inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, code: 'VALUE_OUT_OF_RANGE', title: 'Bad Request' });
    expect(res.body).not.toMatch(/compaction_jobs|0000-01-01|Failed query|out of range for type|uuid/);
  });

  it('leaves other database errors a 500', async () => {
    const res = await appThrowing(failedQuery('42P01', 'relation "x" does not exist')).inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
  });
});
