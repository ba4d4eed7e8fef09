import type { Block, HistoryMessage, NormalizedMessage } from '../../src/compaction/types.js';
import { assertCompleted, compactMeasured, seedConversation, type BenchContext } from '../lib/context.js';
import { target, type Table, type Target } from '../lib/result.js';
import { round } from '../lib/stats.js';
import { defaultPolicy, sequentialFold, toHistory } from '../peers/sequential-fold.js';
import { singleCallSummary } from '../peers/single-call.js';

/** The peers of scenario 2, run on the chunks compactd planned for each session. */

export interface SessionPlan {
  session: string;
  /** chunks in compactd's plan order, each chronological */
  chunks: HistoryMessage[][];
  /** every message compactd compacted, chronological */
  compressed: HistoryMessage[];
  sourceTokens: number;
}

export interface PeerRuns {
  foldMs: number[];
  foldCalls: number;
  singleMs: number[];
  singleOk: boolean;
  trimmedMs: number[];
  /** share of the history the trimmed single call actually summarized */
  trimmedCoverage: number;
}

const TRIM_TOKENS = 4_000;

export async function runPeers(ctx: BenchContext, plans: readonly SessionPlan[], runs: number): Promise<PeerRuns[]> {
  const policy = defaultPolicy();
  const out: PeerRuns[] = plans.map(() => ({ foldMs: [], foldCalls: 0, singleMs: [], singleOk: true, trimmedMs: [], trimmedCoverage: 0 }));
  const openaiBaseUrl = `${ctx.svc.sim.url}/v1`;
  for (let run = 0; run < runs; run += 1) {
    ctx.log(`peers: run ${run + 1}/${runs} (fold, single call, trimmed single call) on ${plans.length} session(s)`);
    await Promise.all(
      plans.map(async (plan, i) => {
        const peer = out[i] as PeerRuns;
        const fold = await sequentialFold({ baseUrl: ctx.svc.sim.url, chunks: plan.chunks, policy });
        peer.foldMs.push(fold.wallMs);
        peer.foldCalls = fold.calls;
        const single = await singleCallSummary({ openaiBaseUrl, messages: plan.compressed, maxOutputTokens: policy.summaryMaxTokens, trimTokens: null });
        peer.singleMs.push(single.wallMs);
        peer.singleOk &&= single.ok;
        const trimmed = await singleCallSummary({ openaiBaseUrl, messages: plan.compressed, maxOutputTokens: policy.summaryMaxTokens, trimTokens: TRIM_TOKENS });
        peer.trimmedMs.push(trimmed.wallMs);
        peer.trimmedCoverage = trimmed.sentTokens / Math.max(1, trimmed.historyTokens);
      }),
    );
  }
  return out;
}

/** Tool ids prefixed per part, so several sessions can be appended to one conversation. */
function renameToolIds(messages: readonly NormalizedMessage[], prefix: string): NormalizedMessage[] {
  const rename = (block: Block): Block => {
    if (block.type === 'tool_use') return { ...block, id: `${prefix}${block.id}` };
    if (block.type === 'tool_result') return { ...block, tool_use_id: `${prefix}${block.tool_use_id}` };
    return block;
  };
  return messages.map((m) => ({ ...m, content: m.content.map(rename) }));
}

/**
 * A conversation larger than the summarizer's window: llm-sim answers any request above
 * `summarizeWindow` tokens with the provider's context-length 400. compactd's chunks stay
 * far below it; the single call cannot.
 */
export async function windowCase(
  ctx: BenchContext,
  options: { profile: string },
  parts: readonly NormalizedMessage[][],
): Promise<{ table: Table; targets: Target[]; notes: string[] }> {
  const window = ctx.quick ? 40_000 : 200_000;
  const messages = parts.length === 1 ? [...(parts[0] ?? [])] : parts.flatMap((part, i) => renameToolIds(part, `p${i}_`));
  ctx.log(`window: ${messages.length} messages, summarizer window ${window} tokens`);
  const id = ctx.uniqueId('window');
  await seedConversation(ctx, id, messages);
  ctx.svc.sim.configure({ profile: options.profile, summarizeWindow: window });
  try {
    const job = await compactMeasured(ctx, id);
    assertCompleted(job, 'window case');
    const plan = job.row.plan;
    const history = (await ctx.svc.api.exportHistory(id)).filter((m) => m.kind === 'message');
    const compressedSet = new Set(plan?.compressedSeqs ?? []);
    const compressed = history.filter((m) => compressedSet.has(m.seq)).map(toHistory);
    const sourceTokens = plan?.chunks.reduce((sum, c) => sum + c.messageTokens, 0) ?? 0;
    const policy = defaultPolicy();
    const openaiBaseUrl = `${ctx.svc.sim.url}/v1`;
    const single = await singleCallSummary({ openaiBaseUrl, messages: compressed, maxOutputTokens: policy.summaryMaxTokens, trimTokens: null });
    const trimmed = await singleCallSummary({ openaiBaseUrl, messages: compressed, maxOutputTokens: policy.summaryMaxTokens, trimTokens: TRIM_TOKENS });
    const largestCall = Math.max(0, ...ctx.svc.sim.callLog().filter((c) => c.api === 'anthropic').map((c) => c.inputTokens));
    ctx.chart.push({ strategy: 'compactd', tokens: sourceTokens, seconds: job.timing.wallMs / 1000, ok: true, label: 'over window' });
    ctx.chart.push({ strategy: 'single call', tokens: sourceTokens, seconds: single.wallMs / 1000, ok: single.ok, label: 'over window' });
    const table: Table = {
      title: `Larger than the summarizer's window (${window} tokens): ${messages.length} messages, ${sourceTokens} tokens to compact${parts.length > 1 ? ' (the four sessions back to back)' : ''}`,
      columns: ['strategy', 'outcome', 'wall s', 'largest request (tokens)'],
      rows: [
        ['compactd', job.view.status, round(job.timing.wallMs / 1000, 1), largestCall],
        ['single call (whole history)', single.ok ? 'ok' : `failed: ${single.error?.message.slice(0, 100) ?? 'no error recorded'}`, round(single.wallMs / 1000, 2), single.sentTokens],
        ['single call (trimmed to 4000 tokens)', trimmed.ok ? `ok, summarized ${round((trimmed.sentTokens / Math.max(1, trimmed.historyTokens)) * 100, 1)}% of the history` : 'failed', round(trimmed.wallMs / 1000, 2), trimmed.sentTokens],
      ],
    };
    return {
      table,
      targets: [target('compactd completes a conversation above the window (1 = yes)', '>=', 1, job.view.status === 'completed' ? 1 : 0)],
      notes: [
        `Above the window, the single call ${single.ok ? 'unexpectedly succeeded' : 'fails with the provider’s context-length error'}; with the middleware’s default trimming it succeeds but summarizes only the newest ${TRIM_TOKENS} tokens, silently dropping the rest.`,
      ],
    };
  } finally {
    ctx.svc.sim.configure({ summarizeWindow: null });
  }
}
