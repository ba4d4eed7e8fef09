import type { Policy } from '../../config/policy.js';
import type { CompactionPlan, PlanRequest, PlanResult, PlanSnapshot } from '../plan-types.js';
import { groupUnits } from './units.js';

/**
 * The span of a `native` compaction (SPEC §5.10): the provider compacts a conversation as its
 * agent sends it, so the span is every active message of the snapshot, in order, except
 * pinned units (they stay verbatim after the provider's item), the previous clip-archive
 * (superseded; the provider reads it as part of the conversation), the leading system prompt
 * (kept, as every strategy keeps it) and a trailing tool call still waiting for its result
 * (the providers refuse to compact after one). One chunk, one call. OpenAI's compaction keeps
 * the user's own messages beside its item, so for OpenAI they stay active too: the request
 * sends them (`nativeRequestSeqs`), the archive does not take them.
 */
export function planNative(snapshot: PlanSnapshot, policy: Policy, request: PlanRequest, provider: 'anthropic' | 'openai'): PlanResult {
  const units = groupUnits(snapshot.messages);
  const tokensBefore = snapshot.messages.reduce((sum, m) => sum + m.tokens, 0);
  const clip = snapshot.messages.find((m) => m.kind === 'clip_archive');
  const leading = units.findIndex((u) => u.kind === 'clip_archive' || u.messages.some((m) => m.role !== 'system'));
  const sent = units.filter(
    (u, i) => (leading === -1 || i >= leading) && u.kind !== 'clip_archive' && !u.pending && !u.messages.some((m) => m.pinned),
  );
  const keptByProvider = (u: (typeof sent)[number]) =>
    provider === 'openai' && u.kind === 'message' && u.messages.every((m) => m.role === 'user' && !m.meta);
  const span = sent.filter((u) => !keptByProvider(u));
  const seqs = span.flatMap((u) => u.seqs);
  if (seqs.length === 0)
    return { kind: 'noop', reason: 'nothing_to_compact', message: 'Nothing to compact: every message is pinned or pending.', tokensBefore };
  const spanTokens = span.reduce((sum, u) => sum + u.tokens, 0);
  const kept = tokensBefore - spanTokens - (clip?.tokens ?? 0);
  const plan: CompactionPlan = {
    kind: 'plan',
    version: 1,
    trigger: request.trigger,
    strategy: 'native',
    watermarkSeq: snapshot.messages.at(-1)?.seq ?? 0,
    contextLimit: snapshot.contextLimit,
    targetTokens: null,
    tokensBefore,
    tokensAfter: kept + Math.min(policy.summaryMaxTokens * 4, Math.ceil(spanTokens / 15)),
    rewrites: [],
    chunks: [{ index: 0, seqs, sourceTokens: spanTokens, messageTokens: spanTokens, truncatedForPrompt: false }],
    compressedSeqs: seqs,
    nativeRequestSeqs: sent.flatMap((u) => u.seqs),
    supersededClipArchiveSeq: clip?.seq ?? null,
    previousBatchIds: snapshot.previousSummaries.map((b) => b.id),
    focus: request.focus ?? null,
    stats: { candidateUnits: span.length, summarizedUnits: span.length, truncated: 0, masked: 0 },
  };
  return plan;
}
