import type { Block, HistoryMessage, NormalizedMessage } from '../../src/compaction/types.js';
import { assertCompleted, type BenchContext, compactMeasured, seedConversation } from '../lib/context.js';
import { type Table, type Target, target } from '../lib/result.js';
import { round } from '../lib/stats.js';
import { DEFAULT_TRIM_TOKENS, type MiddlewareRun, runSummarizationMiddleware } from '../peers/langchain-middleware.js';
import { defaultPolicy, type ExportedMessage, sequentialFold, toHistory } from '../peers/sequential-fold.js';

/**
 * Scenario 2's peers, run on what compactd planned for each session: the real LangChain v1
 * `summarizationMiddleware` on the span compactd compacted, and the sequential fold (a
 * baseline design, not a product) on compactd's chunks.
 */

export interface SessionPlan {
  session: string;
  /** chunks in compactd's plan order, each chronological */
  chunks: HistoryMessage[][];
  /** every stored message of the conversation, chronological */
  history: HistoryMessage[];
  /** index in `history` of the first message after the span compactd compacted */
  firstKeptIndex: number;
  /** messages before `firstKeptIndex` that compactd did not compact (0 when its span is a prefix) */
  spanGaps: number;
  sourceTokens: number;
}

/** The plan's span as a prefix of the history: LangChain's middleware can only summarize a prefix. */
export function planSpan(
  exported: readonly ExportedMessage[],
  compressedSeqs: readonly number[],
): Pick<SessionPlan, 'history' | 'firstKeptIndex' | 'spanGaps'> {
  const history = exported.filter((m) => m.kind === 'message').map(toHistory);
  const compressed = new Set(compressedSeqs);
  const lastSeq = Math.max(-1, ...compressedSeqs);
  const kept = history.findIndex((m) => m.seq > lastSeq);
  const firstKeptIndex = kept === -1 ? history.length : kept;
  const spanGaps = history.slice(0, firstKeptIndex).filter((m) => !compressed.has(m.seq)).length;
  return { history, firstKeptIndex, spanGaps };
}

/** The two settings of the middleware measured: its defaults, and trimming that covers the whole span. */
export const MIDDLEWARE_VARIANTS = {
  defaults: undefined,
  wholeSpan: Number.MAX_SAFE_INTEGER,
} as const;
export type MiddlewareVariant = keyof typeof MIDDLEWARE_VARIANTS;

export interface PeerRuns {
  foldMs: number[];
  foldCalls: number;
  langchain: Record<MiddlewareVariant, MiddlewareRun[]>;
}

function middleware(
  ctx: BenchContext,
  plan: Pick<SessionPlan, 'history' | 'firstKeptIndex'>,
  variant: MiddlewareVariant,
): Promise<MiddlewareRun> {
  const trim = MIDDLEWARE_VARIANTS[variant];
  return runSummarizationMiddleware({
    baseUrl: ctx.svc.sim.url,
    history: plan.history,
    firstKeptIndex: plan.firstKeptIndex,
    maxOutputTokens: defaultPolicy().summaryMaxTokens,
    ...(trim === undefined ? {} : { trimTokensToSummarize: trim }),
    callLog: () => ctx.svc.sim.callLog(),
  });
}

export async function runPeers(ctx: BenchContext, plans: readonly SessionPlan[], runs: number): Promise<PeerRuns[]> {
  const policy = defaultPolicy();
  const out: PeerRuns[] = plans.map(() => ({ foldMs: [], foldCalls: 0, langchain: { defaults: [], wholeSpan: [] } }));
  for (let run = 0; run < runs; run += 1) {
    ctx.log(`peers: run ${run + 1}/${runs}: sequential fold on ${plans.length} session(s) side by side`);
    await Promise.all(
      plans.map(async (plan, i) => {
        const fold = await sequentialFold({ baseUrl: ctx.svc.sim.url, chunks: plan.chunks, policy });
        (out[i] as PeerRuns).foldMs.push(fold.wallMs);
        (out[i] as PeerRuns).foldCalls = fold.calls;
      }),
    );
    // One at a time and alone on llm-sim, like compactd's jobs: its call log is then this run's.
    for (const [i, plan] of plans.entries()) {
      for (const variant of Object.keys(MIDDLEWARE_VARIANTS) as MiddlewareVariant[]) {
        const result = await middleware(ctx, plan, variant);
        ctx.log(
          `peers: LangChain summarizationMiddleware (${variant}) on ${plan.session.slice(0, 8)}: ${result.outcome}, ${round(result.wallMs / 1000, 2)} s, ${result.inputTokens} tokens in`,
        );
        (out[i] as PeerRuns).langchain[variant].push(result);
      }
    }
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

export function outcomeText(run: MiddlewareRun): string {
  if (run.outcome === 'summarized') return 'summary';
  if (run.outcome === 'not triggered') return 'did not fire';
  return `history replaced by "${run.summaryText.slice(0, 90)}…"`;
}

/**
 * A conversation larger than the summarizer's window: llm-sim answers any request above
 * `summarizeWindow` tokens with the provider's context-length 400. compactd's chunks stay
 * far below it; the middleware sends the span in one request, or trims it to its last
 * 4000 tokens first.
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
    const largestCall = Math.max(
      0,
      ...ctx.svc.sim
        .callLog()
        .filter((c) => c.api === 'anthropic')
        .map((c) => c.inputTokens),
    );
    const span = planSpan(await ctx.svc.api.exportHistory(id), plan?.compressedSeqs ?? []);
    const sourceTokens = plan?.chunks.reduce((sum, c) => sum + c.messageTokens, 0) ?? 0;
    const wholeSpan = await middleware(ctx, span, 'wholeSpan');
    const defaults = await middleware(ctx, span, 'defaults');
    ctx.chart.push({ strategy: 'compactd', tokens: sourceTokens, seconds: job.timing.wallMs / 1000, ok: true, label: 'over window' });
    ctx.chart.push({
      strategy: 'LangChain middleware',
      tokens: sourceTokens,
      seconds: wholeSpan.wallMs / 1000,
      ok: wholeSpan.outcome === 'summarized',
      label: 'over window',
    });
    const share = (run: MiddlewareRun) => round((run.inputTokens / Math.max(1, wholeSpan.inputTokens)) * 100, 1);
    const row = (label: string, run: MiddlewareRun) => [
      label,
      outcomeText(run),
      round(run.wallMs / 1000, 2),
      run.inputTokens,
      `${run.replaced} of ${run.messagesBefore}`,
    ];
    const table: Table = {
      title: `Larger than the summarizer's window (${window} tokens): ${messages.length} messages, ${sourceTokens} tokens to compact${parts.length > 1 ? ' (the four sessions back to back)' : ''}`,
      columns: ['strategy', 'outcome', 'wall s', 'largest request (tokens)', 'LangChain messages replaced'],
      rows: [
        ['compactd', job.view.status, round(job.timing.wallMs / 1000, 1), largestCall, '—'],
        row('LangChain summarizationMiddleware, trimTokensToSummarize covering the span', wholeSpan),
        row(`LangChain summarizationMiddleware, defaults (trimTokensToSummarize ${DEFAULT_TRIM_TOKENS})`, defaults),
      ],
    };
    const notes = [
      wholeSpan.outcome === 'error string'
        ? `Above the window, the real middleware's summary request failed with the provider's context-length 400 (${wholeSpan.inputTokens} tokens) and the middleware did not raise it: ` +
          `it replaced ${wholeSpan.replaced} messages of history with the text "${wholeSpan.summaryText.split('\n')[0]?.slice(0, 220) ?? ''}…" and returned normally, so the agent carries on without the span.`
        : `Above the window, the real middleware's whole-span request ended "${wholeSpan.outcome}" (${wholeSpan.inputTokens} tokens sent).`,
      defaults.outcome === 'summarized'
        ? `With its default trimming the middleware succeeds, but its request is ${share(defaults)}% the size of the whole-span one (${defaults.inputTokens} of ${wholeSpan.inputTokens} tokens): ` +
          `all ${defaults.replaced} messages of the span are replaced by a summary of their newest ${DEFAULT_TRIM_TOKENS} tokens, and the rest is dropped without a trace.`
        : `With its default trimming the middleware ended "${defaults.outcome}".`,
    ];
    return {
      table,
      targets: [target('compactd completes a conversation above the window (1 = yes)', '>=', 1, job.view.status === 'completed' ? 1 : 0)],
      notes,
    };
  } finally {
    ctx.svc.sim.configure({ summarizeWindow: null });
  }
}
