import { randomUUID } from 'node:crypto';

import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { createMetrics, type Metrics } from '../../../src/obs/metrics.js';
import { JOBS } from '../../../src/queue/catalog.js';
import { queuePrefix, QUEUES } from '../../../src/queue/names.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

const TOKEN = 'metrics-token-0123456789';

let redis: Redis;
let queue: Queue;
let metrics: Metrics;
let t: TestApi;
let guarded: TestApi;
beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  queue = new Queue(QUEUES.compaction, { connection: redis, prefix: queuePrefix(`t${randomUUID().replaceAll('-', '').slice(0, 12)}`) });
  metrics = createMetrics({ queues: { compaction: queue } });
  t = await createTestApi({ metrics });
  guarded = await createTestApi({}, { COMPACTD_METRICS_TOKEN: TOKEN });
});
afterAll(async () => {
  await t?.close();
  await guarded?.close();
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  redis?.disconnect();
});

/** The value of one series, e.g. `series(text, 'compactd_queue_jobs', {queue: 'compaction', state: 'delayed'})`. */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2]!.split(',');
    if (wanted.every((w) => present.includes(w))) return Number(match[3]);
  }
  return undefined;
}

const scrape = async (api: TestApi, headers: Record<string, string> = {}) => api.app.inject({ method: 'GET', url: '/metrics', headers });

describe('GET /metrics', () => {
  it('serves the Prometheus text format without auth by default', async () => {
    const res = await scrape(t);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain('# TYPE compactd_jobs_finished_total counter');
    expect(res.body).toContain('# TYPE compactd_phase_duration_seconds histogram');
    expect(res.body).toContain('# TYPE compactd_llm_request_duration_seconds histogram');
    expect(res.body).toContain('compactd_process_cpu_seconds_total');
  });

  it('labels HTTP latency by route pattern, method and status, never by URL', async () => {
    for (const id of ['first', 'second', 'third']) {
      await t.app.inject({ method: 'GET', url: `/v1/conversations/${id}`, headers: t.auth() });
    }
    await t.app.inject({ method: 'GET', url: '/no/such/route' });
    const text = (await scrape(t)).body;
    expect(
      series(text, 'compactd_http_request_duration_seconds_count', { method: 'GET', route: '/v1/conversations/:id', status_code: '404' }),
    ).toBe(3);
    expect(series(text, 'compactd_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' })).toBe(1);
    expect(text).not.toContain('/v1/conversations/first');
  });

  it('reports queue depth per queue and state, read at scrape time', async () => {
    const before = series((await scrape(t)).body, 'compactd_queue_jobs', { queue: 'compaction', state: 'delayed' });
    await queue.add(JOBS.plan.name, { jobId: randomUUID() }, { delay: 60_000 });
    await queue.add(JOBS.plan.name, { jobId: randomUUID() }, { delay: 60_000 });
    const text = (await scrape(t)).body;
    expect(before).toBe(0);
    expect(series(text, 'compactd_queue_jobs', { queue: 'compaction', state: 'delayed' })).toBe(2);
    expect(series(text, 'compactd_queue_jobs', { queue: 'compaction', state: 'active' })).toBe(0);
  });

  it('keeps each registry apart (an app built without metrics gets its own)', async () => {
    const other = createMetrics({ processMetrics: false });
    other.jobsFinished.inc({ status: 'completed', trigger: 'api' });
    expect(series(await other.registry.metrics(), 'compactd_jobs_finished_total', { status: 'completed', trigger: 'api' })).toBe(1);
    expect(series((await scrape(t)).body, 'compactd_jobs_finished_total', { status: 'completed', trigger: 'api' })).toBeUndefined();
  });

  it('requires the bearer token when COMPACTD_METRICS_TOKEN is set', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token-000' },
      { authorization: `Basic ${Buffer.from(`x:nope`).toString('base64')}` },
    ]) {
      const res = await scrape(guarded, headers);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toContain('Bearer');
      expect(res.json().code).toBe('METRICS_UNAUTHORIZED');
    }
    const ok = await scrape(guarded, { authorization: `Bearer ${TOKEN}` });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('compactd_http_request_duration_seconds');
  });
});
