import { assertCompleted, type BenchContext, compactMeasured, seedConversation } from '../lib/context.js';
import { syntheticMessages } from '../lib/conversations.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round, spread } from '../lib/stats.js';

export const INSPECTOR_TITLE = '9. Inspector: opening the pages of a 100,000-message conversation';

/** Page opens timed per page (the first is a warm-up, not counted). */
const RUNS = 10;

/**
 * Scenario 9: the inspector's pages of one very long conversation, as a browser asks for them
 * (the whole HTML response, over HTTP, from the API child): the conversation page before any
 * compaction (every message active) and a page deep in its history, then after one
 * compaction (nearly everything archived) the conversation page, one batch's originals and
 * the job page. SPEC §6.2: the conversation opens in under a second.
 */
export async function runInspector(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('inspector', INSPECTOR_TITLE);
  const messages = ctx.quick ? 10_000 : 100_000;
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  result.setup = {
    conversation: `${messages} messages, "chat" mix (~118 tokens per message)`,
    measured: `wall time of GET over HTTP until the whole HTML is read, median of ${RUNS} after a warm-up`,
    compaction: 'one, summarize, default policy, llm-sim profile instant',
  };
  const id = ctx.uniqueId('inspect');
  ctx.log(`inspector: seeding ${messages} messages`);
  await seedConversation(ctx, id, syntheticMessages(messages, { mix: 'chat', seed: 23, tag: id }));
  const path = `/inspect/conversations/${encodeURIComponent(id)}`;
  const rows: Array<Array<string | number>> = [];
  const timePage = async (label: string, url: string): Promise<number> => {
    const times: number[] = [];
    let bytes = 0;
    for (let run = 0; run <= RUNS; run += 1) {
      const t0 = performance.now();
      const res = await ctx.svc.api.request<string>('GET', url);
      const elapsed = performance.now() - t0;
      bytes = res.body.length;
      if (run > 0) times.push(elapsed);
    }
    result.figures.push(figure(label, 'ms', times));
    const s = spread(times);
    rows.push([label, round(s.median, 1), round(s.p90, 1), round(bytes / 1024, 0)]);
    return s.median;
  };

  const activeFirst = await timePage('conversation page, all active', path);
  await timePage('history page deep in the conversation, all active', `${path}?after=${Math.floor(messages / 2)}`);
  ctx.log('inspector: compacting');
  // scale-out, before this scenario, leaves no worker running (a fresh one, as every scenario starts)
  await ctx.svc.startWorker();
  const job = await compactMeasured(ctx, id);
  assertCompleted(job, 'inspector compaction');
  const archivedFirst = await timePage('conversation page, after one compaction', path);
  const batchIds = job.view.result?.['batchIds'];
  const batchId = Array.isArray(batchIds) ? (batchIds[Math.floor(batchIds.length / 2)] as string | undefined) : undefined;
  if (batchId) await timePage("one batch's originals (a page of 50)", `/inspect/batches/${batchId}/originals?after=0`);
  await timePage('job page', `/inspect/jobs/${job.view.id}`);
  await timePage('archive search from the conversation page', `${path}?q=${encodeURIComponent('queue retry')}`);

  result.tables.push({ title: 'Inspector pages (ms)', columns: ['page', 'median ms', 'p90 ms', 'HTML KB'], rows });
  result.targets.push(target(`conversation page opens, ${messages} messages all active (median)`, '<=', 1000, activeFirst, 'ms'));
  result.targets.push(target(`conversation page opens, ${messages} messages after a compaction (median)`, '<=', 1000, archivedFirst, 'ms'));
  for (const t of result.targets) {
    if (!t.met) {
      t.bottleneck =
        'not profiled: the page reads one page of messages by seq, at most 20 folded batches, 400 batch-tree rows (without ledgers), ' +
        "the live batches' ledgers (merged in the API process) and the last 200 jobs; the ledger merge grows with the span, the rest is bounded";
    }
  }
  if (ctx.quick) result.notes.push('Quick mode: 10,000 messages instead of 100,000.');
  await ctx.svc.stopWorker();
  result.durationMs = performance.now() - started;
  return [result];
}
