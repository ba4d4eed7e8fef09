import { sql } from 'drizzle-orm';

import { pickConversations } from '../lib/corpus.js';
import { apiCalls, fetchHttp, type Http, type HttpResponse } from '../lib/http.js';
import { AppendLedger, checkHistories } from '../lib/invariants.js';
import { recordCrashes } from '../lib/outcome.js';
import { percentile, ScenarioRecorder, type ScenarioResult } from '../lib/result.js';
import { seedConversations } from '../lib/seed.js';
import { startChaosStack } from '../lib/stack.js';

/**
 * Issue 10 §4: over real HTTP to a listening API process, N concurrent compaction requests
 * for one conversation make exactly one job, and N concurrent appends carrying the same
 * Idempotency-Key store the messages once. No worker runs, so the job stays active for the
 * whole storm and every later request must be deduplicated against it.
 */

export interface DuplicateStormOptions {
  variant: 'quick' | 'full';
  requests: number;
  logDir?: string;
}

export const DUPLICATE_STORM_FULL: DuplicateStormOptions = { variant: 'full', requests: 1_000 };
export const DUPLICATE_STORM_QUICK: DuplicateStormOptions = { variant: 'quick', requests: 1_000 };

interface Outcome {
  res: HttpResponse | null;
  error: string | null;
  ms: number;
}

async function storm(n: number, send: () => Promise<HttpResponse>): Promise<Outcome[]> {
  // Every request is created before any is awaited: they are all in flight together.
  return Promise.all(
    Array.from({ length: n }, async () => {
      const started = performance.now();
      try {
        const res = await send();
        return { res, error: null, ms: performance.now() - started };
      } catch (error) {
        return { res: null, error: error instanceof Error ? error.message : String(error), ms: performance.now() - started };
      }
    }),
  );
}

function statusCounts(outcomes: readonly Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes)
    counts.set(o.res ? String(o.res.status) : 'network error', (counts.get(o.res ? String(o.res.status) : 'network error') ?? 0) + 1);
  return [...counts]
    .sort()
    .map(([status, n]) => `${status}×${n}`)
    .join(', ');
}

const serverErrors = (outcomes: readonly Outcome[]) => outcomes.filter((o) => o.res === null || o.res.status >= 500).length;

export async function runDuplicateStorm(options: DuplicateStormOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('duplicate-storm', 'Duplicate storms over HTTP', options.variant);
  const stack = await startChaosStack(options.logDir ? { logDir: options.logDir } : {});
  try {
    const api = await stack.startApi();
    const http: Http = fetchHttp(api.url, stack.keys.tenant, 120_000);
    const ledger = new AppendLedger();
    const [conversation] = pickConversations(1);
    const [id] = await seedConversations(apiCalls(http), ledger, 'storm', [conversation!], { auto: false });

    const compactions = await storm(options.requests, () =>
      http.request('POST', `/v1/conversations/${id}/compactions`, { body: { strategy: 'summarize' } }),
    );
    rec.figure('compaction storm: responses', statusCounts(compactions));
    rec.expect('compaction storm: responses 5xx or failed', serverErrors(compactions), '==', 0);
    const jobIds = new Set(compactions.flatMap((o) => (o.res && o.res.status < 300 ? [o.res.json<{ id: string }>().id] : [])));
    rec.expect('compaction storm: distinct job ids returned', jobIds.size, '==', 1);
    rec.expect('compaction storm: 202 (created)', compactions.filter((o) => o.res?.status === 202).length, '==', 1);
    rec.expect(
      'compaction storm: 200 with deduplicated=true',
      compactions.filter((o) => o.res?.status === 200 && o.res.json<{ deduplicated?: boolean }>().deduplicated === true).length,
      '==',
      options.requests - 1,
    );
    const [jobs] = await stack.db.db.execute<{ n: number }>(sql`select count(*)::int as n from compaction_jobs`);
    rec.expect('compaction storm: job rows', Number(jobs?.n), '==', 1);
    rec.figure(
      'compaction storm: latency p50 / p99 (ms)',
      `${Math.round(
        percentile(
          compactions.map((o) => o.ms),
          50,
        ),
      )} / ${Math.round(
        percentile(
          compactions.map((o) => o.ms),
          99,
        ),
      )}`,
    );

    const messages = [
      {
        role: 'user' as const,
        content: [{ type: 'text' as const, text: 'Storm message one: run the migration in db/migrations/0042_users.sql.' }],
      },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Storm message two: the migration ran; 3 tables changed.' }] },
    ];
    const [before] = await stack.db.db.execute<{ n: number }>(sql`select count(*)::int as n from messages`);
    const appends = await storm(options.requests, () =>
      http.request('POST', `/v1/conversations/${id}/messages`, { body: { messages }, headers: { 'idempotency-key': 'storm-append-1' } }),
    );
    rec.figure('append storm: responses', statusCounts(appends));
    rec.expect('append storm: responses 5xx or failed', serverErrors(appends), '==', 0);
    const created = appends.filter((o) => o.res?.status === 201);
    rec.expect('append storm: distinct 201 bodies', new Set(created.map((o) => o.res?.text)).size, '==', 1);
    rec.expect(
      'append storm: other than 201 or 409 (in progress)',
      appends.filter((o) => o.res?.status !== 201 && o.res?.status !== 409).length,
      '==',
      0,
    );
    const [after] = await stack.db.db.execute<{ n: number }>(sql`select count(*)::int as n from messages`);
    rec.expect('append storm: messages stored (request carries 2)', Number(after?.n) - Number(before?.n), '==', messages.length);
    const first = created[0]?.res?.json<{ messages: Array<{ seq: number }> }>();
    if (first)
      ledger.record(
        id as string,
        first.messages.map((m) => m.seq),
        messages,
      );
    const history = await checkHistories(stack.db.db, ledger);
    rec.expect('messages lost or duplicated', history.lost + history.duplicated + history.unexpected, '==', 0);
    rec.figure(
      'append storm: latency p50 / p99 (ms)',
      `${Math.round(
        percentile(
          appends.map((o) => o.ms),
          50,
        ),
      )} / ${Math.round(
        percentile(
          appends.map((o) => o.ms),
          99,
        ),
      )}`,
    );
    recordCrashes(rec, stack.crashes);
    rec.note(
      `${options.requests} requests each, all sent at once with fetch (keep-alive, one socket per request in flight) to one \`compactd api\` process; ` +
        'no worker runs, so the compaction job stays active throughout. A 409 IDEMPOTENCY_KEY_IN_USE means "the first request is still in progress" (retry later).',
    );
  } finally {
    await stack.close();
  }
  return rec.finish();
}
