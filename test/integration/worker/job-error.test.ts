import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { redactError } from '../../../src/obs/redact-error.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * A step that fails on a real Postgres error (a trigger refuses the commit's insert of the
 * batch with a data exception, the way an out-of-range value would): the job fails with a
 * stable code and a short message in the row, the API and the webhook; the SQL text, its
 * values and the driver's message are only in the worker's log.
 */

const TRIGGER_MESSAGE = 'refused by the job-error test trigger';
const SECRET = 'whsec_job_error_secret_0123456789';

let stack: Stack;
let server: Server;
const bodies: string[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      bodies.push(body);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const logger = pino({ level: 'warn', serializers: { err: redactError } }, { write: (line: string) => void logLines.push(line) });
  stack = await createStack({ logger, env: { COMPACTD_WEBHOOK_ALLOW: '127.0.0.1', COMPACTD_WEBHOOK_BACKOFF_MS: '100' } });
  const res = await stack.app.inject({
    method: 'PUT',
    url: '/v1/webhook',
    headers: stack.auth(),
    payload: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, secret: SECRET, events: ['compaction.failed'] },
  });
  expect(res.statusCode, res.body).toBe(200);
  await stack.db.db.execute(
    sql.raw(`
    create function refuse_batch() returns trigger language plpgsql as $$
    begin raise exception '${TRIGGER_MESSAGE}' using errcode = '22003'; end $$;
    create trigger refuse_batch before insert on batches for each row execute function refuse_batch();`),
  );
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await new Promise((resolve) => server?.close(resolve));
});

/** Anything that tells how the database is built, or what a failed query carried. */
const LEAKS = [
  /insert into/i,
  /"batches"/,
  /Failed query/,
  /params:/,
  /\$\d/,
  new RegExp(TRIGGER_MESSAGE),
  /22003/,
  /refuse_batch/,
  /plpgsql/i,
];

describe('a step that fails on a Postgres error', () => {
  it('fails the job with a stable code and a short message, in the row, the API and the webhook; the SQL is in the log only', async () => {
    const messages = loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages.slice(
      0,
      40,
    );
    await seedConversation(stack, 'job-error', messages, { policy: { auto: false } });
    const job = await compact(stack, 'job-error', { strategy: 'summarize', keepRecent: 4 });
    // finalize retries (a database error may be transient) before the job fails for good
    const done = await waitForJob(stack, job.id, 90_000);
    expect(done.status).toBe('failed');

    const expected = { code: 'DATABASE_DATA_EXCEPTION', message: expect.stringMatching(/^The database refused a value/) };
    expect(done.error).toEqual(expected);
    const [row] = await stack.db.sql<Array<{ error: string }>>`select error::text as error from compaction_jobs where id = ${job.id}`;
    expect(JSON.parse(row!.error)).toEqual(expected);

    await waitFor(() => bodies.length > 0, 20_000, 50, 'the compaction.failed webhook');
    const event = JSON.parse(bodies[0]!) as { type: string; data: { job: { error: unknown } } };
    expect(event.type).toBe('compaction.failed');
    expect(event.data.job.error).toEqual(expected);
    const deliveries = await stack.app.inject({ method: 'GET', url: '/v1/webhooks/deliveries', headers: stack.auth() });

    for (const shown of [JSON.stringify(done), JSON.stringify(row), bodies[0]!, deliveries.body]) {
      for (const leak of LEAKS) expect(shown).not.toMatch(leak);
    }
    // the operator still learns what happened: the log has the query and the driver's words
    const log = logLines.join('');
    expect(log).toContain('Failed query');
    expect(log).toContain(TRIGGER_MESSAGE);
  }, 120_000);
});
