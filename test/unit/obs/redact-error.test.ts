import { DrizzleQueryError } from 'drizzle-orm/errors';
import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { redactError } from '../../../src/obs/redact-error.js';

const SECRET = 'whsec_do-not-log-0123456789';

/** The shapes the driver and drizzle produce (their constructors, not look-alikes). */
function failedQuery(): Error {
  const driverError = Object.assign(new Error(`invalid input syntax for type integer: "${SECRET}"`), {
    name: 'PostgresError',
    code: '22P02',
    detail: `Key (secret)=(${SECRET}) already exists.`,
    where: `unnamed portal parameter $2 = '${SECRET}'`,
    severity: 'ERROR',
  });
  return new DrizzleQueryError('insert into "webhook_endpoints" ("url", "secret") values ($1, $2)', ['https://x', SECRET], driverError);
}

describe('redactError', () => {
  it('drops query parameters from the message, the stack, the properties and the causes, and keeps the SQL and codes', () => {
    const error = failedQuery();
    expect(JSON.stringify({ message: error.message, stack: error.stack })).toContain(SECRET);
    const redacted = redactError(error) as Record<string, unknown>;
    expect(JSON.stringify(redacted)).not.toContain(SECRET);
    expect(redacted['message']).toContain('insert into "webhook_endpoints"');
    expect(redacted['params']).toBe('[redacted]');
    expect(redacted['cause']).toMatchObject({
      code: '22P02',
      severity: 'ERROR',
      detail: '[redacted]',
      where: '[redacted]',
      message: 'invalid input syntax for type integer: [redacted]',
    });
    expect(String(redacted['stack'])).toMatch(/\n\s+at /);
  });

  it('is what the service logger writes for `err`', () => {
    const lines: string[] = [];
    const logger = pino({ serializers: { err: redactError } }, { write: (line: string) => lines.push(line) });
    logger.error({ err: failedQuery() }, 'unhandled error');
    expect(lines.join('')).not.toContain(SECRET);
    expect(lines.join('')).toContain('Failed query');
  });

  it('passes anything that is not an Error through unchanged', () => {
    expect(redactError('text')).toBe('text');
    expect(redactError({ a: 1 })).toEqual({ a: 1 });
  });
});
