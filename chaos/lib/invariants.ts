import { sql } from 'drizzle-orm';

import { normalizeMessages } from '../../src/compaction/normalize.js';
import type { Block, NormalizedMessage } from '../../src/compaction/types.js';
import type { Db } from '../../src/db/client.js';
import { ACTIVE_JOB_STATUSES } from '../../src/db/schema.js';

/**
 * The durable-state checks every chaos suite ends with. They read Postgres directly (the
 * source of truth) and never trust the code under test to report on itself.
 */

/** JSON with sorted keys: jsonb does not keep key order, so content is compared canonically. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The content the service must keep for a message appended in the default (anthropic) format. */
export function expectedContent(message: NormalizedMessage): Block[] {
  const normalized = normalizeMessages([message], 'anthropic');
  if (!normalized.ok) throw new Error(`test message does not normalize: ${JSON.stringify(normalized.issues)}`);
  return (normalized.messages[0] as NormalizedMessage).content;
}

/** What the harness knows it appended: acknowledged seq → canonical content, per conversation. */
export class AppendLedger {
  private readonly byConversation = new Map<string, Map<number, string>>();

  record(conversationId: string, seqs: readonly number[], messages: readonly NormalizedMessage[]): void {
    const ledger = this.byConversation.get(conversationId) ?? new Map<number, string>();
    seqs.forEach((seq, i) => ledger.set(seq, canonical(expectedContent(messages[i] as NormalizedMessage))));
    this.byConversation.set(conversationId, ledger);
  }

  conversations(): string[] {
    return [...this.byConversation.keys()];
  }

  get(conversationId: string): Map<number, string> {
    return this.byConversation.get(conversationId) ?? new Map();
  }

  get size(): number {
    return [...this.byConversation.values()].reduce((sum, m) => sum + m.size, 0);
  }
}

export interface HistoryCheck {
  acknowledged: number;
  /** acknowledged messages found neither active nor archived as summarized */
  lost: number;
  /** seqs present more than once across the active history and the summarized archive */
  duplicated: number;
  /** messages whose original content differs from what was appended */
  altered: number;
  /** seqs stored that no acknowledged append produced (an append stored twice, or a phantom) */
  unexpected: number;
}

/**
 * Every acknowledged message must exist exactly once in `messages ∪ archived(summarized)`,
 * and its original (the first archived version, else the active row) must be what was sent.
 */
export async function checkHistories(db: Db, ledger: AppendLedger): Promise<HistoryCheck> {
  const total: HistoryCheck = { acknowledged: 0, lost: 0, duplicated: 0, altered: 0, unexpected: 0 };
  for (const externalId of ledger.conversations()) {
    const expected = ledger.get(externalId);
    const placements = await db.execute<{ seq: number; n: number }>(sql`
      select seq::int as seq, count(*)::int as n from (
        select m.seq from messages m join conversations c on c.id = m.conversation_id
         where c.external_id = ${externalId} and m.kind = 'message'
        union all
        select a.seq from archived_messages a join conversations c on c.id = a.conversation_id
         where c.external_id = ${externalId} and a.reason = 'summarized' and a.kind = 'message'
      ) s group by seq`);
    const originals = await db.execute<{ seq: number; content: unknown }>(sql`
      select distinct on (seq) seq::int as seq, content from (
        select a.seq, a.content, a.archived_at as at, 0 as pref from archived_messages a join conversations c on c.id = a.conversation_id
         where c.external_id = ${externalId} and a.kind = 'message'
        union all
        select m.seq, m.content, now() as at, 1 as pref from messages m join conversations c on c.id = m.conversation_id
         where c.external_id = ${externalId} and m.kind = 'message'
      ) o order by seq, pref, at`);
    const count = new Map(placements.map((r) => [Number(r.seq), Number(r.n)]));
    const original = new Map(originals.map((r) => [Number(r.seq), canonical(r.content)]));
    total.acknowledged += expected.size;
    for (const [seq, content] of expected) {
      const n = count.get(seq) ?? 0;
      if (n === 0) total.lost += 1;
      if (n > 1) total.duplicated += n - 1;
      if (n > 0 && original.get(seq) !== content) total.altered += 1;
    }
    total.unexpected += [...count.keys()].filter((seq) => !expected.has(seq)).length;
  }
  return total;
}

export interface StateCheck {
  nonTerminalJobs: number;
  /** batches or archive rows written by a job that did not complete: a partial commit */
  partialCommitRows: number;
  /** conversations with more than one active clip-archive message */
  multipleClipArchives: number;
  /** conversations whose message/token counters disagree with their active rows */
  counterMismatches: number;
  /** completed, unreverted jobs whose recorded batches are missing */
  completedWithoutBatches: number;
}

export async function checkState(db: Db): Promise<StateCheck> {
  const [row] = await db.execute<Record<keyof StateCheck, number>>(sql`
    select
      (select count(*)::int from compaction_jobs where status = any(${sql.param([...ACTIVE_JOB_STATUSES])}::text[])) as "nonTerminalJobs",
      (select count(*)::int from batches b left join compaction_jobs j on j.id = b.job_id where j.status is distinct from 'completed')
        + (select count(*)::int from archived_messages a left join compaction_jobs j on j.id = a.job_id where j.status is distinct from 'completed')
        as "partialCommitRows",
      (select count(*)::int from (select conversation_id from messages where kind = 'clip_archive' group by 1 having count(*) > 1) x) as "multipleClipArchives",
      (select count(*)::int from conversations c where c.message_count <> (select count(*) from messages m where m.conversation_id = c.id)
         or c.active_tokens <> (select coalesce(sum(tokens), 0) from messages m where m.conversation_id = c.id)) as "counterMismatches",
      (select count(*)::int from compaction_jobs j, jsonb_array_elements_text(coalesce(j.result->'batchIds', '[]'::jsonb)) as bid(id)
         where j.status = 'completed' and j.result->'revertedAt' is null
           and not exists (select 1 from batches b where b.id = bid.id::uuid)) as "completedWithoutBatches"`);
  if (!row) throw new Error('state check returned nothing');
  return row;
}

/** Job rows by status (all jobs of the database). */
export async function jobStatusCounts(db: Db): Promise<Record<string, number>> {
  const rows = await db.execute<{ status: string; n: number }>(sql`select status, count(*)::int as n from compaction_jobs group by status`);
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** Waits (bounded) until no job is active; returns how many still are. */
export async function waitForTerminalJobs(db: Db, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const active = (await checkState(db).catch(() => null))?.nonTerminalJobs ?? Number.POSITIVE_INFINITY;
    if (active === 0 || Date.now() > deadline) return Number.isFinite(active) ? active : -1;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
