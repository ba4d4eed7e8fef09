import pino from 'pino';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { waitFor } from '../../../harness/wait-for.js';
import { buildApp } from '../../../src/api/app.js';
import { createDeps } from '../../../src/app/deps.js';
import { runShutdown } from '../../../src/app/shutdown.js';
import { apiDepsFrom } from '../../../src/app/start-api.js';
import { loadConfig } from '../../../src/config/env.js';
import { createDb, type DbHandle } from '../../../src/db/client.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';
import { conversationByExternalId, createWithMessages, simulateCompaction } from '../../helpers/archive-seed.js';

/**
 * The API's bounds on search: a per-tenant cap on searches at once (429 with retry-after,
 * the slot given back on every path) and a statement timeout answered as a 503. Searches are
 * held open deterministically by a lock on the archive another session keeps.
 */

const MAX_SEARCHES = 4;
let t: TestApi;
/** a session that locks the archive, so every search waits on it */
let locker: postgres.Sql;

beforeAll(async () => {
  t = await createTestApi({}, { COMPACTD_TENANT_MAX_SEARCHES: String(MAX_SEARCHES) });
  await createWithMessages(t, 'limits', [
    { role: 'user', content: [{ type: 'text', text: 'The deploy key is kestrel-7731.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Noted the key.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Carry on.' }] },
  ]);
  const conversation = await conversationByExternalId(t.db.db, 'limits');
  await simulateCompaction(t.db.db, conversation, { chunks: [{ seqs: [1, 2], summary: 'A key was given.' }] });
  locker = postgres(t.db.url, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  await locker?.end({ timeout: 5 });
  await t?.close();
});

/** Runs `body` while another session holds an ACCESS EXCLUSIVE lock on archived_messages. */
async function withArchiveLocked(body: () => Promise<void>): Promise<void> {
  await locker.begin(async (tx) => {
    await tx`lock table archived_messages in access exclusive mode`;
    await body();
  });
}

/** Searches waiting on a lock, seen from pg_stat_activity. */
async function searchesWaiting(): Promise<number> {
  const [row] = await t.db.sql<[{ n: number }]>`
    select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query like '%websearch_to_tsquery%'`;
  return row.n;
}

const search = (key = t.key, id = 'limits') =>
  t.app.inject({ method: 'GET', url: `/v1/conversations/${id}/archive/search?q=kestrel`, headers: t.auth(key) });

describe('concurrent searches per tenant', () => {
  it('answers the search past the cap with 429 and retry-after, and gives every slot back', async () => {
    let held: Array<ReturnType<typeof search>> = [];
    await withArchiveLocked(async () => {
      held = Array.from({ length: MAX_SEARCHES }, () => search());
      await waitFor(async () => (await searchesWaiting()) === MAX_SEARCHES, 20_000, 50, 'searches blocked on the lock');
      const refused = await search();
      expect(refused.statusCode, refused.body).toBe(429);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json()).toMatchObject({ status: 429, code: 'TOO_MANY_SEARCHES' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // another tenant has slots of its own (its conversation does not exist: a 404, not a 429)
      expect((await search(t.otherKey)).statusCode).toBe(404);
    });
    // the held searches finish once the lock goes
    expect((await Promise.all(held)).map((r) => r.statusCode)).toEqual(Array(MAX_SEARCHES).fill(200));
    // every slot is back: errors (404) release theirs too, so 2 × the cap of them in a row all answer 404
    for (let i = 0; i < 2 * MAX_SEARCHES; i++) expect((await search(t.key, 'no-such-conversation')).statusCode).toBe(404);
    const results = await Promise.all(Array.from({ length: MAX_SEARCHES }, () => search()));
    expect(results.map((r) => r.statusCode)).toEqual(Array(MAX_SEARCHES).fill(200));
  });

  it('gives the slot back when the client goes away mid-search', async () => {
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    await withArchiveLocked(async () => {
      const aborts = Array.from({ length: MAX_SEARCHES }, () => new AbortController());
      const requests = aborts.map((abort) =>
        fetch(`${url}/v1/conversations/limits/archive/search?q=kestrel`, { headers: t.auth(), signal: abort.signal }).catch(() => null),
      );
      await waitFor(async () => (await searchesWaiting()) === MAX_SEARCHES, 20_000, 50, 'searches blocked on the lock');
      for (const abort of aborts) abort.abort();
      await Promise.all(requests);
    });
    // the abandoned searches end when the lock goes; then all the slots are free again
    await waitFor(async () => (await searchesWaiting()) === 0, 20_000, 50, 'abandoned searches done');
    await waitFor(
      async () => {
        const results = await Promise.all(Array.from({ length: MAX_SEARCHES }, () => search()));
        return results.every((r) => r.statusCode === 200);
      },
      20_000,
      100,
      'every slot free',
    );
  });
});

describe("the inspector's recall search", () => {
  const inspect = () => t.app.inject({ method: 'GET', url: '/inspect/conversations/limits?q=kestrel', headers: t.auth() });

  it("shares the API's cap: past it, the inspector's search and the API's both answer 429", async () => {
    let held: Array<ReturnType<typeof search>> = [];
    await withArchiveLocked(async () => {
      // the cap (4) taken half by each
      held = [search(), search(), inspect(), inspect()];
      await waitFor(async () => (await searchesWaiting()) === MAX_SEARCHES, 20_000, 50, 'searches blocked on the lock');
      for (const refused of [await inspect(), await search()]) {
        expect(refused.statusCode, refused.body).toBe(429);
        expect(refused.json()).toMatchObject({ status: 429, code: 'TOO_MANY_SEARCHES' });
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
    });
    const answers = await Promise.all(held);
    expect(answers.map((r) => r.statusCode)).toEqual(Array(MAX_SEARCHES).fill(200));
    expect(answers.at(-1)?.body).toContain('kestrel');
    // the inspector gives its slots back: more pages in a row than the cap all answer
    for (let i = 0; i < 2 * MAX_SEARCHES; i++) expect((await inspect()).statusCode).toBe(200);
  });
});

describe('statement timeout', () => {
  let timed: DbHandle;
  let app: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    timed = createDb(t.db.url, { max: 4, name: 'search-limits-timed', statementTimeoutMs: 300 });
    app = await buildApp({
      config: loadConfig({ DATABASE_URL: t.db.url, REDIS_URL: TEST_REDIS_URL }),
      db: timed.db,
      sql: timed.sql,
      redis: t.redis,
      logger: pino({ level: 'silent' }),
      countTokens: () => 0,
      afterAppend: async () => null,
      compactions: { enqueue: async () => {}, cancel: async () => {} },
    });
  });
  afterAll(async () => {
    await app?.close();
    await timed?.close();
  });

  it('answers a query cut by statement_timeout with 503 QUERY_TIMEOUT and retry-after, never a 500', async () => {
    await withArchiveLocked(async () => {
      const res = await app.inject({ method: 'GET', url: '/v1/conversations/limits/archive/search?q=kestrel', headers: t.auth() });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ status: 503, code: 'QUERY_TIMEOUT' });
      expect(res.body).not.toMatch(/select|archived_messages/i);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });
    const after = await app.inject({ method: 'GET', url: '/v1/conversations/limits/archive/search?q=kestrel', headers: t.auth() });
    expect(after.statusCode).toBe(200);
  });

  it('is set on the API pool only: the worker pool of the same process keeps none', async () => {
    const config = loadConfig({ DATABASE_URL: t.db.url, REDIS_URL: TEST_REDIS_URL, COMPACTD_API_STATEMENT_TIMEOUT_MS: '1234' });
    const { deps, closeSteps } = createDeps(config, { logger: pino({ level: 'silent' }), name: 'search-limits-deps' });
    try {
      const api = apiDepsFrom(deps);
      const [apiSetting] = await api.sql<[{ statement_timeout: string }]>`show statement_timeout`;
      const [workerSetting] = await deps.sql<[{ statement_timeout: string }]>`show statement_timeout`;
      expect(apiSetting.statement_timeout).toBe('1234ms');
      expect(workerSetting.statement_timeout).toBe('0');
      expect(api.db).toBe(deps.api.db);
    } finally {
      await runShutdown(closeSteps, 10_000, pino({ level: 'silent' }));
    }
  });
});
