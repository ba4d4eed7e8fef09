import { byCoverage, type ConsolidationCandidate, needsConsolidation } from '../compaction/consolidate/index.js';
import { type ClipBatch, escapeSummary } from '../compaction/context/index.js';
import {
  emptyLedger,
  guessCwd,
  type Ledger,
  type LedgerCounts,
  ledgerCounts,
  mergeAllLedgers,
  renderLedger,
} from '../compaction/ledger/index.js';
import {
  countForgotten,
  FORGOTTEN_MAX_NAMES,
  type ForgottenCounts,
  namesMissingFrom,
  type SearchableText,
  searchableText,
  spanNames,
} from '../compaction/recall/index.js';
import { findMissingIdentifiers, normalizeSpace } from '../compaction/summarize/index.js';
import type { CountTokens } from '../compaction/types.js';
import type { Policy } from '../config/policy.js';
import type { Tx } from '../db/client.js';
import type { ChunkRowWithoutLedger } from '../db/repos/chunks.js';
import { identifiersInActiveMessages } from '../db/repos/context-reads.js';
import { recordForgotten } from '../db/repos/forgotten.js';
import { insertJob, type JobRow } from '../db/repos/jobs.js';

/** Pieces both commit transactions share (a compaction's and a consolidation's). */

export function batchRow(
  owner: { conversationId: string; jobId: string; countTokens: CountTokens },
  chunk: ChunkRowWithoutLedger & { ledger?: Ledger | null },
  coverage: { level: number; seqs: number[]; sourceMessages: number; sourceTokens: number },
) {
  const summary = chunk.summary ?? '';
  const usage = chunk.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  return {
    conversationId: owner.conversationId,
    jobId: owner.jobId,
    ...coverage,
    summary,
    summaryTokens: owner.countTokens(summary),
    model: chunk.model ?? 'unknown',
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    costUsd: chunk.costUsd,
    identifiers: chunk.identifiers,
    ledger: chunk.ledger ?? null,
  };
}

/**
 * Retention as the job result reports it (SPEC §5.6a): every identifier extracted from the
 * span (uncapped, the union of the chunks' gates), looked up in the context after the
 * commit. Each chunk's identifiers are looked up first in its own summary as the clip-archive
 * carries it (escaped): searching the whole clip-archive for each one would cost identifiers
 * × clip length, seconds at 100 chunks. What a summary lacks is then looked up in the whole
 * clip-archive; what that lacks, in the active messages (the caller's one lookup).
 */
function retentionOutsideClip(
  chunks: readonly ChunkRowWithoutLedger[],
  clip: SearchableText,
): { total: number; missingFromClip: string[] } {
  const total = new Set(chunks.flatMap((c) => c.identifiers)).size;
  const notInOwnSummary = new Set(chunks.flatMap((c) => findMissingIdentifiers(c.identifiers, escapeSummary(c.summary ?? ''))));
  return { total, missingFromClip: missingFromLongText([...notInOwnSummary], clip) };
}

/**
 * `findMissingIdentifiers(ids, text)`, exactly, for many identifiers in one long text (the
 * clip-archive of a thousand batches), searched through its sketch: an identifier whose
 * windows the text lacks is missing without a scan.
 */
export function missingFromLongText(ids: readonly string[], text: string | SearchableText): string[] {
  if (ids.length === 0) return [];
  const searchable = typeof text === 'string' ? searchableText(text) : text;
  return ids.filter((id) => !searchable.contains(normalizeSpace(id).trim()));
}

function retention(
  outside: { total: number; missingFromClip: string[] },
  inMessages: ReadonlySet<string>,
): { found: number; total: number } {
  return { found: outside.total - outside.missingFromClip.filter((id) => !inMessages.has(id)).length, total: outside.total };
}

export async function measureRetention(
  tx: Tx,
  conversationId: string,
  chunks: readonly ChunkRowWithoutLedger[],
  clipText: string,
): Promise<{ found: number; total: number }> {
  const outside = retentionOutsideClip(chunks, searchableText(clipText));
  return retention(outside, await identifiersInActiveMessages(tx, conversationId, outside.missingFromClip));
}

/**
 * SPEC §5.5 step 4, §5.7: when more batches are live than `maxLiveBatches`, or the new
 * clip-archive is over its token budget with two or more batches, a consolidation job is
 * recorded in the same transaction (so it cannot be lost); the caller enqueues it after the
 * commit, and the reconciler re-enqueues it if that enqueue never happens. At most one
 * consolidation is active per conversation (a partial unique index): null when one is.
 */
export async function enqueueConsolidationIfNeeded(
  tx: Tx,
  job: Pick<JobRow, 'tenantId' | 'conversationId'>,
  live: { batches: number; clipTokens: number },
  policy: Pick<Policy, 'maxLiveBatches' | 'clipArchiveMaxTokens'>,
): Promise<string | null> {
  if (!needsConsolidation(live.batches, live.clipTokens, policy)) return null;
  const row = await insertJob(tx, { tenantId: job.tenantId, conversationId: job.conversationId, trigger: 'consolidate', options: {} });
  return row?.id ?? null;
}

/** A live batch as a commit sees it: what the clip-archive shows, and its ledger when it has one. */
export type StatefulBatch = ClipBatch & { ledger?: Ledger | null };

export interface ClipState {
  /** the live batches' ledgers merged in coverage order (latest wins), or null when none has one */
  ledger: Ledger | null;
  cwd: string | null;
  /** the state of the work as the clip-archive shows it (empty without a ledger) */
  text: string;
}

/** The ledgers of `batches`, merged oldest coverage first; null when none has one. */
export function mergedLedger(batches: readonly StatefulBatch[]): Ledger | null {
  const ledgers = byCoverage(batches).flatMap((b) => (b.ledger ? [b.ledger] : []));
  return ledgers.length > 0 ? mergeAllLedgers(ledgers) : null;
}

/** How many stored ledgers a paged merge holds at once, beside the running result. */
export const LEDGER_PAGE_SIZE = 100;

/**
 * The stored ledgers of `batches` merged oldest coverage first, exactly as `mergedLedger`
 * merges them, read `LEDGER_PAGE_SIZE` at a time: a ledger is tens of KB as objects, and
 * holding a thousand batches' at once was a consolidation's memory peak. Merging is
 * associative (ledger/merge.ts), so the running result merged with the next page equals the
 * merge of all of them. Null when none has a ledger.
 */
export async function mergeStoredLedgers(
  batches: readonly ConsolidationCandidate[],
  readLedgers: (ids: readonly string[]) => Promise<ReadonlyMap<string, Ledger | null>>,
): Promise<Ledger | null> {
  const ordered = byCoverage(batches);
  let merged: Ledger | null = null;
  for (let start = 0; start < ordered.length; start += LEDGER_PAGE_SIZE) {
    const page = ordered.slice(start, start + LEDGER_PAGE_SIZE);
    const stored = await readLedgers(page.map((b) => b.id));
    const ledgers = page.flatMap((b) => {
      const ledger = stored.get(b.id);
      return ledger ? [ledger] : [];
    });
    if (ledgers.length > 0) merged = mergeAllLedgers(merged ? [merged, ...ledgers] : ledgers);
  }
  return merged;
}

/**
 * SPEC §5.7 (1): the state of the work — the live batches' merged ledger rendered within
 * `ledgerMaxTokens`, paths relative to the working directory the ledger's files share.
 */
export function clipState(
  live: readonly StatefulBatch[],
  policy: Pick<Policy, 'ledgerMaxTokens'> & Partial<Pick<Policy, 'ledgerRecentCommands'>>,
  countTokens: CountTokens,
): ClipState {
  return clipStateOf(mergedLedger(live), policy, countTokens);
}

/** `clipState` of the live batches' ledger already merged (`mergeStoredLedgers`). */
export function clipStateOf(
  ledger: Ledger | null,
  policy: Pick<Policy, 'ledgerMaxTokens'> & Partial<Pick<Policy, 'ledgerRecentCommands'>>,
  countTokens: CountTokens,
): ClipState {
  if (!ledger) return { ledger: null, cwd: null, text: '' };
  const cwd = guessCwd(ledger);
  const lead = cwd ? `State of the work (paths relative to ${cwd}):` : 'State of the work:';
  const body = renderLedger(ledger, {
    maxTokens: Math.max(0, policy.ledgerMaxTokens - countTokens(lead) - 1),
    countTokens,
    ...(cwd ? { cwd } : {}),
    protectTags: ['compactd'],
    escape: 'tags',
    ...(policy.ledgerRecentCommands !== undefined && { caps: { recentCommands: policy.ledgerRecentCommands } }),
  });
  return { ledger, cwd, text: body ? `${lead}\n${body}` : '' };
}

/**
 * A compaction's figures on what its context holds, with one lookup of the active messages
 * for both: retention (above), and SPEC §5.9's names of the span that the context no longer
 * holds — in neither the clip-archive nor an active message — recorded with the job (the
 * first FORGOTTEN_MAX_NAMES; the counts cover all).
 */
export async function measureContextHolds(
  tx: Tx,
  input: {
    jobId: string;
    conversationId: string;
    chunks: readonly ChunkRowWithoutLedger[];
    /** the chunks' ledgers merged in time order (their idx) */
    spanLedger: Ledger | null;
    clipText: string;
    cwd: string | null;
  },
): Promise<{ identifiers: { found: number; total: number }; forgotten: ForgottenCounts }> {
  // the clip-archive prepared once for both lookups (identifiers, then ledger names)
  const clip = searchableText(input.clipText);
  const outside = retentionOutsideClip(input.chunks, clip);
  const notInClip = namesMissingFrom(spanNames(input.spanLedger), clip, input.cwd);
  const needles = [...new Set([...outside.missingFromClip, ...notInClip.map((n) => n.name)])];
  const inMessages = await identifiersInActiveMessages(tx, input.conversationId, needles);
  const forgotten = notInClip.filter((n) => !inMessages.has(n.name));
  await recordForgotten(tx, input.jobId, forgotten.slice(0, FORGOTTEN_MAX_NAMES));
  return { identifiers: retention(outside, inMessages), forgotten: countForgotten(forgotten) };
}

/** The job result's figures on the context it leaves (SPEC §6.1), measured on what the commit wrote. */
export function contextFigures(
  state: ClipState,
  activeTokens: number,
  clipArchiveTokens: number,
): { context: { tokens: number; clipArchiveTokens: number }; ledger: LedgerCounts } {
  return { context: { tokens: activeTokens, clipArchiveTokens }, ledger: ledgerCounts(state.ledger ?? emptyLedger()) };
}
