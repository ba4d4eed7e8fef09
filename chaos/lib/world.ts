import { sql } from 'drizzle-orm';

import { exampleFor } from '../fuzz/schema-arb.js';
import { pickConversations } from './corpus.js';
import { apiCalls, type Http } from './http.js';
import { canonical } from './invariants.js';
import type { RouteInfo } from './routes.js';
import type { ChaosStack } from './stack.js';

/**
 * Resources of tenant `chaos` for the auth matrix and the fuzzer to aim at: a conversation
 * compacted once (a completed job, batches, archived originals), a conversation webhook and
 * a tenant webhook; plus a conversation of tenant `chaos-other`. The compaction runs on a
 * worker process that is stopped afterwards, so nothing changes the database behind the
 * suites' backs.
 */

export interface World {
  conversationId: string;
  jobId: string;
  batchId: string;
  otherConversationId: string;
  /** ids that must never appear in another tenant's responses */
  secrets: string[];
}

export async function buildWorld(stack: ChaosStack, own: Http, other: Http): Promise<World> {
  const api = apiCalls(own);
  const [conversation] = pickConversations(1);
  await api.createConversation('world-a', { policy: { auto: false } });
  await api.append('world-a', conversation!.messages);
  const worker = await stack.startWorker({}, 'world-worker');
  const job = await api.compact('world-a', { strategy: 'summarize', keepRecent: 4 });
  const done = await api.job(job.id, 30);
  await worker.kill('SIGKILL');
  if (done.status !== 'completed') throw new Error(`world compaction ended ${done.status}: ${JSON.stringify(done.error ?? done.result)}`);
  const batchId = done.result?.batchIds?.[0];
  if (!batchId) throw new Error('world compaction wrote no batch');
  for (const [url, body] of [
    ['/v1/conversations/world-a/webhook', { url: 'https://example.com/hooks/world-a', secret: 'world-a-secret-0123456789' }],
    ['/v1/webhook', { url: 'https://example.com/hooks/tenant', secret: 'tenant-secret-0123456789' }],
  ] as const) {
    const res = await own.request('PUT', url, { body });
    if (res.status >= 300) throw new Error(`PUT ${url}: ${res.status} ${res.text}`);
  }
  await apiCalls(other).createConversation('world-b');
  return {
    conversationId: 'world-a',
    jobId: job.id,
    batchId,
    otherConversationId: 'world-b',
    secrets: ['world-a', job.id, batchId, 'world-a-secret-0123456789', 'tenant-secret-0123456789', 'example.com/hooks'],
  };
}

/** The route's URL with its parameters aimed at tenant `chaos`'s resources and its required query parameters set. */
export function fillUrl(route: RouteInfo, world: World): string {
  const query = (route.operation?.parameters ?? [])
    .filter((p) => p.in === 'query' && p.required === true)
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(exampleFor(p.schema ?? { type: 'string' })))}`);
  return `${fillPath(route.path, world)}${query.length > 0 ? `?${query.join('&')}` : ''}`;
}

/** Values for route parameters, so requests reach real resources of tenant `chaos`. */
export function fillPath(path: string, world: World): string {
  return (
    path
      .replace(/^\/v1\/conversations\/:id/, `/v1/conversations/${world.conversationId}`)
      .replace(/^\/v1\/jobs\/:id/, `/v1/jobs/${world.jobId}`)
      .replace(/^\/v1\/batches\/:id/, `/v1/batches/${world.batchId}`)
      .replace(/^\/inspect\/conversations\/:id/, `/inspect/conversations/${world.conversationId}`)
      .replace(/^\/inspect\/jobs\/:id/, `/inspect/jobs/${world.jobId}`)
      .replace(/^\/inspect\/batches\/:id/, `/inspect/batches/${world.batchId}`)
      .replace(/^\/inspect\/assets\/:file/, '/inspect/assets/inspect.css')
      .replace(/:queueName/g, 'compaction')
      .replace(/:queueStatus/g, 'failed')
      .replace(/:schedulerId/g, 'reconcile')
      .replace(/:jobId/g, world.jobId)
      // a message seq (pins): a valid one, so another tenant's key meets the conversation check, not validation
      .replace(/:seq\b/g, '1')
      .replace(/:[A-Za-z0-9_]+/g, 'unknown')
      .replace(/\*$/, 'anything')
  );
}

/**
 * Everything Postgres holds, as one comparable value: row counts of every table plus a
 * digest of the mutable columns, so "nothing was stored" and "nothing changed" are checks.
 */
export async function fingerprint(db: ChaosStack['db']['db'], tenantName?: string): Promise<string> {
  if (tenantName !== undefined) return tenantFingerprint(db, tenantName);
  const [row] = await db.execute<Record<string, unknown>>(sql`
    select
      (select count(*) from tenants) as tenants,
      (select count(*) || ':' || coalesce(max(revoked_at)::text, '') from api_keys) as api_keys,
      (select count(*) || ':' || coalesce(sum(next_seq + version + active_tokens + message_count + compaction_count), 0) from conversations) as conversations,
      (select md5(coalesce(string_agg(id::text || seq || tokens || md5(content::text), ',' order by id), '')) from messages) as messages,
      (select count(*) from archived_messages) as archived,
      (select count(*) from batches) as batches,
      (select md5(coalesce(string_agg(id::text || status || coalesce(result::text, ''), ',' order by id), '')) from compaction_jobs) as jobs,
      (select count(*) || ':' || count(*) filter (where status = 'done') from compaction_chunks) as chunks,
      (select count(*) from idempotency_keys) as idempotency,
      (select md5(coalesce(string_agg(id::text || url || enabled::text || updated_at::text, ',' order by id), '')) from webhook_endpoints) as webhooks,
      (select count(*) from webhook_deliveries) as deliveries`);
  return canonical(row);
}

/** The same, restricted to one tenant's rows: what another tenant's requests must never change. */
async function tenantFingerprint(db: ChaosStack['db']['db'], tenantName: string): Promise<string> {
  const [row] = await db.execute<Record<string, unknown>>(sql`
    with t as (select id from tenants where name = ${tenantName}), c as (select id from conversations where tenant_id in (select id from t))
    select
      (select count(*) || ':' || coalesce(max(revoked_at)::text, '') from api_keys where tenant_id in (select id from t)) as api_keys,
      (select count(*) || ':' || coalesce(sum(next_seq + version + active_tokens + message_count + compaction_count), 0)
         from conversations where id in (select id from c)) as conversations,
      (select md5(coalesce(string_agg(id::text || seq || tokens || md5(content::text), ',' order by id), '')) from messages where conversation_id in (select id from c)) as messages,
      (select count(*) from archived_messages where conversation_id in (select id from c)) as archived,
      (select count(*) from batches where conversation_id in (select id from c)) as batches,
      (select md5(coalesce(string_agg(id::text || status || coalesce(result::text, ''), ',' order by id), '')) from compaction_jobs where tenant_id in (select id from t)) as jobs,
      (select count(*) from idempotency_keys where tenant_id in (select id from t)) as idempotency,
      (select md5(coalesce(string_agg(id::text || url || enabled::text || updated_at::text, ',' order by id), '')) from webhook_endpoints where tenant_id in (select id from t)) as webhooks`);
  return canonical(row);
}
