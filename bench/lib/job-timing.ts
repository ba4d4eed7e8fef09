import type postgres from 'postgres';

import type { CompactdProcess } from '../../harness/index.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import { analyzeCalls, type CallAnalysis } from './critical-path.js';

/**
 * Where one compaction's time went, from three clocks on one machine: the job row (created
 * by the API, started by the plan step, the commit transaction's `now()` in `updated_at`,
 * `finished_at` set just before that transaction commits), the worker's log line
 * "compaction planned", and llm-sim's call log.
 */

export interface JobRowTimes {
  id: string;
  status: string;
  createdMs: number;
  startedMs: number | null;
  finishedMs: number | null;
  /** for a completed job: the start of its commit transaction */
  updatedMs: number;
  plan: { chunks: Array<{ index: number; seqs: number[]; sourceTokens: number; messageTokens: number }>; compressedSeqs: number[] } | null;
  result: Record<string, unknown> | null;
  /** size of the stored job-level plan as JSON text (finalize reads it; summarize steps read their chunk row) */
  planBytes: number;
}

export async function readJob(sql: postgres.Sql, jobId: string): Promise<JobRowTimes> {
  const [row] = await sql<Array<Record<string, unknown>>>`
    -- the chunks (and so the summarized seqs) are rows of compaction_chunks; they are put back into the plan's shape here
    select id, status, result, coalesce(octet_length(plan::text), 0) as plan_bytes,
      case when plan is null then null else plan || jsonb_build_object('chunks', coalesce((
        select jsonb_agg(jsonb_build_object('index', c.idx, 'seqs', c.seqs, 'sourceTokens', c.source_tokens, 'messageTokens', c.message_tokens) order by c.idx)
          from compaction_chunks c where c.job_id = j.id), '[]'::jsonb),
        'compressedSeqs', coalesce((select jsonb_agg(s.seq order by s.seq)
          from compaction_chunks c cross join unnest(c.seqs) as s(seq) where c.job_id = j.id), '[]'::jsonb)) end as plan,
      extract(epoch from created_at) * 1000 as created_ms,
      extract(epoch from started_at) * 1000 as started_ms,
      extract(epoch from finished_at) * 1000 as finished_ms,
      extract(epoch from updated_at) * 1000 as updated_ms
    from compaction_jobs j where id = ${jobId}`;
  if (!row) throw new Error(`job ${jobId} not found`);
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: String(row['id']),
    status: String(row['status']),
    createdMs: num(row['created_ms']) as number,
    startedMs: num(row['started_ms']),
    finishedMs: num(row['finished_ms']),
    updatedMs: num(row['updated_ms']) as number,
    plan: (row['plan'] ?? null) as JobRowTimes['plan'],
    result: (row['result'] ?? null) as Record<string, unknown> | null,
    planBytes: Number(row['plan_bytes']),
  };
}

export interface JobPhases {
  /** API insert → the plan step starts (enqueue + queue hop + job load) */
  toPlanMs: number;
  /** the plan step: load the history, plan, persist the plan */
  planMs: number;
  /** plan persisted → first LLM call starts (flow fan-out, queue hop, prompt building) */
  fanOutMs: number;
  /** first call start → last call end */
  llmWindowMs: number;
  /** last call end → commit transaction starts (memoize, queue hop to finalize, load), re-summary excluded */
  toCommitMs: number;
  /** the one commit transaction */
  commitMs: number;
}

export interface JobTiming {
  jobId: string;
  status: string;
  chunks: number;
  wallMs: number;
  /** wall time minus the time during which an LLM call was in flight */
  nonLlmMs: number;
  phases: JobPhases | null;
  llm: CallAnalysis | null;
}

export function jobTiming(job: JobRowTimes, calls: readonly CallRecord[], worker: CompactdProcess | null): JobTiming {
  const wallMs = (job.finishedMs ?? job.updatedMs) - job.createdMs;
  const llm = calls.length > 0 ? analyzeCalls(calls) : null;
  const planned = worker?.records(['compaction planned']).find((r) => r['jobId'] === job.id);
  let phases: JobPhases | null = null;
  if (job.startedMs !== null && job.finishedMs !== null && planned && llm) {
    const plannedMs = Number(planned['time']);
    phases = {
      toPlanMs: job.startedMs - job.createdMs,
      planMs: plannedMs - job.startedMs,
      fanOutMs: llm.firstStartMs - plannedMs,
      llmWindowMs: llm.lastEndMs - llm.firstStartMs,
      toCommitMs: job.updatedMs - llm.lastEndMs,
      commitMs: job.finishedMs - job.updatedMs,
    };
  }
  return {
    jobId: job.id,
    status: job.status,
    chunks: job.plan?.chunks.length ?? 0,
    wallMs,
    nonLlmMs: wallMs - (llm?.llmUnionMs ?? 0),
    phases,
    llm,
  };
}
