import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { InProcessStack as EvalStack } from '../harness/index.js';
import { countMessageTokens } from '../src/compaction/tokens.js';
import { DEFAULT_POLICY } from '../src/config/policy.js';
import { countTokens } from '../src/lib/count-tokens.js';
import type { LlmSim } from '../src/llm-sim/server.js';
import type { Collection, EvalCase } from './corpus.js';
import { type ActiveMessage, activeMessages, chunkSummaries, compactAndWait, seed, waitForJob } from './drive.js';
import { LANGCHAIN_SETTINGS, langchainSummary } from './langchain.js';
import { type ContextMeasures, measureContext, type SpanFacts, spanFacts } from './measure.js';
import { contextText, IDENTIFIER_KINDS, type IdentifierKind } from './metrics.js';
import { deriveProbes } from './probes/index.js';
import type { EvalHalf } from './split.js';
import type { Engine, Variant } from './variants.js';

/** Runs every variant of one case through the service and measures each result and the peer's summary. */

export interface JobFacts {
  status: string;
  /** noop reason or failure code */
  reason: string | null;
  durationMs: number;
  batches: number;
  /** the gate's own count over the identifiers it checked (capped per chunk) */
  gate: { found: number; total: number } | null;
  masked: number;
  truncated: number;
  llmCalls: number;
  models: string[];
  fallbacks: number;
  /** the consolidation job the compaction enqueued, waited for before the context is read */
  consolidation: { status: string; reason: string | null } | null;
}

export interface MeasureRow {
  system: 'compactd' | string;
  variant: string;
  label: string;
  engine: Engine | 'peer' | 'langchain';
  strategy: string | null;
  job: JobFacts | null;
  /** null when the job failed */
  measures: ContextMeasures | null;
  /** a peer run's outcome when it is not a job (LangChain: summarized / error string / not triggered) */
  outcome?: string;
}

export interface CaseReport {
  id: string;
  collection: Collection;
  /** the half of the corpus the case is in (split.ts) */
  half: EvalHalf;
  source: string;
  messages: number;
  tokensBefore: number;
  /** the context window given to the conversation: the history sits exactly at the auto trigger */
  contextLimit: number;
  peerPreTokens: number | null;
  identifiers: { total: number; byKind: Partial<Record<IdentifierKind, number>> };
  instructions: number;
  requests: number;
  rows: MeasureRow[];
}

const JOB_TIMEOUT_MS = 15 * 60_000;

function number(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function jobFacts(job: Awaited<ReturnType<typeof compactAndWait>>, durationMs: number): JobFacts {
  const r = job.result ?? {};
  const identifiers = r['identifiers'] as { found: number; total: number } | undefined;
  const rewrites = (r['rewrites'] ?? {}) as Record<string, unknown>;
  const llm = (r['llm'] ?? {}) as Record<string, unknown>;
  return {
    status: job.status,
    reason: typeof r['reason'] === 'string' ? r['reason'] : (job.error?.code ?? null),
    durationMs,
    batches: Array.isArray(r['batchIds']) ? r['batchIds'].length : 0,
    gate: identifiers ?? null,
    masked: number(rewrites['masked']),
    truncated: number(rewrites['truncated']),
    llmCalls: number(llm['calls']),
    models: Array.isArray(llm['models']) ? (llm['models'] as string[]) : [],
    fallbacks: Array.isArray(r['fallbacks']) ? r['fallbacks'].length : 0,
    consolidation: null,
  };
}

/**
 * How many of the case's messages (a prefix) the compaction's span covers: up to the last
 * seq that left the active history as itself (archived into a batch; a message rewritten in
 * place, masked or truncated, is still there).
 */
export function spanEnd(seeded: readonly number[], active: readonly Pick<ActiveMessage, 'seq' | 'kind'>[]): number {
  const present = new Set(active.filter((m) => m.kind !== 'clip_archive').map((m) => m.seq));
  let end = 0;
  seeded.forEach((seq, i) => {
    if (!present.has(seq)) end = i + 1;
  });
  return end;
}

interface VariantRun {
  row: MeasureRow;
  /** the case's messages the compaction archived (a prefix), null when it did not complete */
  spanEnd: number | null;
}

async function runVariant(stack: EvalStack, c: EvalCase, facts: SpanFacts, variant: Variant, contextLimit: number): Promise<VariantRun> {
  const id = `${c.id}-${variant.key}`.slice(0, 128);
  const { activeTokens, seqs } = await seed(stack, id, c.messages, { contextLimit, policy: variant.policy });
  const options: Record<string, unknown> = { strategy: variant.strategy, model: variant.model };
  // an auto compaction aims at the policy target; a manual one would compress every candidate
  if (variant.strategy === 'auto') options['target'] = { ratio: DEFAULT_POLICY.targetRatio };
  const started = Date.now();
  const job = await compactAndWait(stack, id, options, JOB_TIMEOUT_MS);
  const row: MeasureRow = {
    system: 'compactd',
    variant: variant.key,
    label: variant.label,
    engine: variant.engine,
    strategy: variant.strategy,
    job: jobFacts(job, Date.now() - started),
    measures: null,
  };
  if (job.status !== 'completed' && job.status !== 'noop') return { row, spanEnd: null };
  // the context an agent continues from is the one after the consolidation the compaction started
  const consolidationId = job.result?.['consolidationJobId'];
  if (typeof consolidationId === 'string' && row.job) {
    const merged = await waitForJob(stack, consolidationId, JOB_TIMEOUT_MS);
    const reason = merged.result?.['reason'];
    row.job.consolidation = { status: merged.status, reason: typeof reason === 'string' ? reason : (merged.error?.code ?? null) };
  }
  // a noop leaves the history as it was: that is the context the agent keeps
  const active = await activeMessages(stack, id);
  const summaries = contextText(active.filter((m) => m.kind === 'clip_archive'));
  const kept = active.filter((m) => m.kind !== 'clip_archive');
  const tokensAfter = active.reduce((sum, m) => sum + m.tokens, 0);
  const chunks = await chunkSummaries(stack, id);
  const end = spanEnd(seqs, active);
  const probes = { probes: deriveProbes(c.messages.slice(0, end), { cwd: c.cwd }), spanMessages: end };
  row.measures = measureContext(facts, { summaries, kept, chunkSummaries: chunks, probes }, activeTokens, tokensAfter);
  await dumpContext(`${c.id}-${variant.key}`, `${summaries}\n\n${contextText(kept)}`);
  return { row, spanEnd: end };
}

function peerRow(c: EvalCase, facts: SpanFacts, tokensBefore: number): MeasureRow | null {
  if (!c.peer) return null;
  // the peer summarized the whole case: the session up to its compaction boundary
  const probes = { probes: deriveProbes(c.messages, { cwd: c.cwd }), spanMessages: c.messages.length };
  const measures = measureContext(facts, { summaries: c.peer.summary, kept: [], probes }, tokensBefore, countTokens(c.peer.summary));
  return {
    system: c.peer.name,
    variant: 'peer',
    label: `${c.peer.name}'s own summary (${c.peer.trigger ?? 'unknown'} compaction)`,
    engine: 'peer',
    strategy: null,
    job: null,
    measures,
  };
}

export interface StacksByEngine {
  main: EvalStack;
  sim: EvalStack | null;
  /** the simulator the LangChain middleware summarizes with; null: no LangChain rows */
  langchain: LlmSim | null;
}

/**
 * The LangChain middleware's summary of the span the default reset compacted (the same
 * prefix), measured like any context: its summary and the messages after the span.
 */
async function langchainRows(sim: LlmSim, c: EvalCase, facts: SpanFacts, tokensBefore: number, end: number): Promise<MeasureRow[]> {
  const rows: MeasureRow[] = [];
  const kept = c.messages.slice(end);
  const keptTokens = kept.reduce((sum, m) => sum + countMessageTokens(m, countTokens), 0);
  const probes = { probes: deriveProbes(c.messages.slice(0, end), { cwd: c.cwd }), spanMessages: end };
  for (const setting of LANGCHAIN_SETTINGS) {
    const run = await langchainSummary(sim, c.messages, end, setting);
    const summarized = run.outcome === 'summarized';
    const summaryTokens = countTokens(run.summary);
    rows.push({
      system: 'LangChain',
      variant: setting.key,
      label: setting.label,
      engine: 'langchain',
      strategy: null,
      job: null,
      measures: summarized
        ? measureContext(facts, { summaries: run.summary, kept, probes }, tokensBefore, summaryTokens + keptTokens)
        : null,
      outcome: run.outcome,
    });
  }
  return rows;
}

/** Measures one case: the peer's summary (if any) and every variant, run concurrently on the workers. */
export async function runCase(c: EvalCase, variants: readonly Variant[], stacks: StacksByEngine): Promise<CaseReport> {
  const facts = spanFacts(c.messages);
  const tokensBefore = c.messages.reduce((sum, m) => sum + countMessageTokens(m, countTokens), 0);
  const contextLimit = Math.max(1024, Math.ceil(tokensBefore / DEFAULT_POLICY.triggerRatio));
  const runs = await Promise.all(
    variants.map((v) => {
      const stack = v.engine === 'llm-sim' ? stacks.sim : stacks.main;
      if (!stack) throw new Error(`variant ${v.key} needs the llm-sim stack`);
      return runVariant(stack, c, facts, v, contextLimit);
    }),
  );
  const rows = runs.map((r) => r.row);
  // LangChain summarizes the span the default reset compacted, alone on the simulator
  const resetEnd = runs.find((r) => r.row.variant === 'reset-local')?.spanEnd ?? null;
  if (stacks.langchain && resetEnd !== null && resetEnd > 0)
    rows.push(...(await langchainRows(stacks.langchain, c, facts, tokensBefore, resetEnd)));
  const peer = peerRow(c, facts, tokensBefore);
  const byKind: Partial<Record<IdentifierKind, number>> = {};
  for (const kind of IDENTIFIER_KINDS) {
    const n = facts.identifiers.filter((i) => i.kind === kind).length;
    if (n > 0) byKind[kind] = n;
  }
  return {
    id: c.id,
    collection: c.collection,
    half: c.half,
    source: c.source,
    messages: c.messages.length,
    tokensBefore,
    contextLimit,
    peerPreTokens: c.peer?.preTokens ?? null,
    identifiers: { total: facts.identifiers.length, byKind },
    instructions: facts.instructions.length,
    requests: facts.requests.length,
    rows: peer ? [peer, ...rows] : rows,
  };
}

/** `COMPACTD_EVAL_DUMP_DIR=dir`: each compactd row's context as text, to read what a probe missed. */
async function dumpContext(name: string, text: string): Promise<void> {
  const dir = process.env['COMPACTD_EVAL_DUMP_DIR'];
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `${name}.txt`), text);
}
