import { isMergeRequest, REPAIR_HEADING } from '../../src/compaction/summarize/prompt.js';
import type { HistoryMessage } from '../../src/compaction/types.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import { assertCompleted, type BenchContext, compactMeasured } from '../lib/context.js';
import { syntheticMessages } from '../lib/conversations.js';
import { analyzeCalls } from '../lib/critical-path.js';
import { FRAMING_PARTS, meanFraming } from '../lib/request-framing.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round } from '../lib/stats.js';
import { defaultPolicy, sequentialFold, toHistory } from '../peers/sequential-fold.js';

/**
 * Scenario 7: a conversation grown and compacted ten times. Summarizer input tokens (as the
 * provider counts them) per source token compacted, for compactd and for a sequential fold
 * over the same chunks that carries its running summary from round to round.
 */

export async function runTokens(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('tokens', '7. Token economy over repeated compactions');
  const rounds = 10;
  const perRound = ctx.quick ? 40 : 150;
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  await ctx.svc.startWorker();
  result.setup = {
    profile: 'instant (token counts do not depend on latency)',
    growth: `${rounds} rounds: append ${perRound} messages ("agent" mix, ~358 tokens each), then compact (summarize, default policy)`,
    input: 'summarizer input tokens as llm-sim reports them (gpt-tokenizer), every call: chunks, identifier retries, re-summaries',
    source: 'tokens of the original messages compacted (sum of the plans’ chunk messageTokens)',
  };
  const main = await growAndCompact(ctx, rounds, perRound, {}, true);
  ctx.log('tokens: the same growth with the identifier check off');
  const noCheck = await growAndCompact(ctx, rounds, perRound, { identifierCheck: false }, false);
  const { source, compactd, fold, perRoundRows } = main;
  const ratio = compactd.input / source;
  const foldRatio = fold.input / source;
  result.figures.push(figure('compactd summarizer input / source tokens', '×', [ratio]));
  result.figures.push(figure('sequential fold summarizer input / source tokens', '×', [foldRatio]));
  const noCheckRatio = noCheck.compactd.input / noCheck.source;
  result.figures.push(figure('compactd with identifierCheck: false, input / source tokens', '×', [noCheckRatio]));
  result.targets.push(target('compactd input / source tokens over 10 compactions', '<=', 1.1, ratio, '×'));
  result.tables.push({
    title: 'Per round',
    // a round that starts a consolidation (every other one here) carries its merge call besides the chunk calls
    columns: ['round', 'chunks', 'source tokens', 'compactd input', 'of which consolidation', 'compactd ratio', 'fold input', 'fold ratio'],
    rows: perRoundRows,
  });
  result.tables.push({
    title: `Where compactd's input tokens went (${compactd.calls} calls; fold: ${fold.calls} calls)`,
    columns: ['kind of call', 'input tokens', 'per source token'],
    rows: [
      ['chunk call (instructions + header + excerpt + directive)', compactd.first, round(compactd.first / source, 3)],
      ['retries (an answer stopped at its budget, or a repair call)', compactd.retry, round(compactd.retry / source, 3)],
      ['consolidation of older batches (follow-up jobs)', compactd.resummary, round(compactd.resummary / source, 3)],
      ['total', compactd.input, round(ratio, 3)],
      ['same growth, identifierCheck: false (total)', noCheck.compactd.input, round(noCheckRatio, 3)],
    ],
  });
  const framing = meanFraming(main.chunkCalls);
  if (framing) {
    const { mean } = framing;
    const names: Record<(typeof FRAMING_PARTS)[number], string> = {
      system: 'system prompt',
      instructions: 'instructions (the same in every call)',
      directive: 'final directive (fence ID, length, keep line)',
      header: 'orientation header (latest request, task state)',
      keep: 'identifiers to keep',
      tags: "the fence's tags (one per turn) and message framing",
    };
    result.tables.push({
      title: `What a chunk call carries besides its excerpt (tokens, mean over ${framing.calls} chunk calls, read off the requests llm-sim received)`,
      columns: ['part', 'tokens per call', 'per 1,000 excerpt tokens'],
      rows: [
        ...FRAMING_PARTS.map((part) => [names[part], round(mean[part], 0), round((1000 * mean[part]) / mean.excerpt, 1)]),
        ['excerpt (the turns’ text)', round(mean.excerpt, 0), 1000],
        ['total input', round(mean.total, 0), round((1000 * mean.total) / mean.excerpt, 0)],
      ],
    });
  }
  if (!(result.targets[0]?.met ?? true) && result.targets[0]) {
    const overRetry = compactd.retry / source;
    const overFirst = compactd.first / source - 1;
    const parts = framing
      ? ` (per call: ${FRAMING_PARTS.map((part) => `${part} ${round(framing.mean[part], 0)}`).join(', ')} tokens, beside an excerpt of ${round(framing.mean.excerpt, 0)})`
      : '';
    result.targets[0].bottleneck =
      `Not CPU: the input itself. Retries add ${round(overRetry, 2)} per source token; ` +
      `chunk calls carry the system prompt, instructions, directive, header, identifiers to keep and the fence's tags besides the excerpt (+${round(overFirst, 2)}${parts}); ` +
      `consolidations add ${round(compactd.resummary / source, 2)}: the clip-archive's budget (clipArchiveMaxTokens) is over after every other round, and the merge reads the live summaries again.`;
  }
  result.durationMs = performance.now() - started;
  return [result];
}

interface Totals {
  source: number;
  /** the chunk calls (no merge, no repair), bodies included */
  chunkCalls: CallRecord[];
  compactd: { input: number; first: number; retry: number; resummary: number; calls: number };
  fold: { input: number; calls: number };
  perRoundRows: Array<Array<string | number>>;
}

/** Grows one conversation round by round, compacting after each append; the fold peer follows the same chunks. */
async function growAndCompact(
  ctx: BenchContext,
  rounds: number,
  perRound: number,
  policyOverrides: Record<string, unknown>,
  withFold: boolean,
): Promise<Totals> {
  const id = ctx.uniqueId('tokens');
  await ctx.svc.api.createConversation(id, { policy: { auto: false, ...policyOverrides } });
  const policy = defaultPolicy();
  let source = 0;
  const compactd = { input: 0, first: 0, retry: 0, resummary: 0, calls: 0 };
  const fold = { input: 0, calls: 0 };
  let running: string | null = null;
  const chunkCalls: CallRecord[] = [];
  const perRoundRows: Array<Array<string | number>> = [];
  for (let r = 0; r < rounds; r += 1) {
    ctx.log(`tokens: round ${r + 1}/${rounds}`);
    await ctx.svc.api.append(id, syntheticMessages(perRound, { mix: 'agent', seed: 1000 + r, tag: `${id}r${r}`, offset: r * perRound }));
    const job = await compactMeasured(ctx, id);
    assertCompleted(job, `tokens round ${r + 1}`);
    const plan = job.row.plan;
    if (!plan) throw new Error('completed job without a plan');
    const calls = analyzeCalls(job.allCalls);
    for (const call of job.allCalls) {
      const text = JSON.stringify(call.body ?? '');
      if (call.body !== undefined && !isMergeRequest(text) && !text.includes(REPAIR_HEADING)) chunkCalls.push(call);
    }
    const roundSource = plan.chunks.reduce((sum, c) => sum + c.messageTokens, 0);
    source += roundSource;
    compactd.input += calls.inputTokens;
    compactd.first += calls.tokensByKind.first;
    compactd.retry += calls.tokensByKind.retry;
    compactd.resummary += calls.tokensByKind.resummary;
    compactd.calls += calls.calls;
    if (!withFold) {
      perRoundRows.push([
        r + 1,
        plan.chunks.length,
        roundSource,
        calls.inputTokens,
        calls.tokensByKind.resummary,
        round(calls.inputTokens / roundSource, 3),
        '',
        '',
      ]);
      continue;
    }
    // the fold peer summarizes the same chunks, carrying its running summary across rounds
    const history = (await ctx.svc.api.exportHistory(id)).filter((m) => m.kind === 'message');
    const bySeq = new Map<number, HistoryMessage>(history.map((m) => [m.seq, toHistory(m)]));
    const chunks = plan.chunks.map((c) => c.seqs.map((seq) => bySeq.get(seq)).filter((m): m is HistoryMessage => m !== undefined));
    const folded = await sequentialFold({ baseUrl: ctx.svc.sim.url, chunks, policy, initialSummary: running });
    running = folded.summary;
    fold.input += folded.inputTokens;
    fold.calls += folded.calls;
    perRoundRows.push([
      r + 1,
      plan.chunks.length,
      roundSource,
      calls.inputTokens,
      calls.tokensByKind.resummary,
      round(calls.inputTokens / roundSource, 3),
      folded.inputTokens,
      round(folded.inputTokens / roundSource, 3),
    ]);
  }
  return { source, chunkCalls, compactd, fold, perRoundRows };
}
