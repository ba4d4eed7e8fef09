import { pool } from '../lib/batch-jobs.js';
import { type BenchContext, settleDatabase } from '../lib/context.js';
import { jsonBytes, syntheticMessages } from '../lib/conversations.js';
import { cpuShares, perUnit } from '../lib/cpu-shares.js';
import { watchCpuByRole } from '../lib/cpu-time.js';
import { profileApi } from '../lib/profiling.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round, spread } from '../lib/stats.js';

/**
 * Scenario 5: messages per second through POST /v1/conversations/:id/messages in batches of
 * 500 messages of ~1 KB, request bodies serialized before the clock starts. One client
 * appending to one conversation, then four clients on four conversations at once.
 */

const BATCH = 500;

interface IngestRun {
  rate: number;
  latencies: number[];
  /** CPU µs per message by process over the run */
  cpuUs: Record<string, number>;
}

async function ingest(ctx: BenchContext, clients: number, perClient: number, seed: number): Promise<IngestRun> {
  const ids = Array.from({ length: clients }, () => ctx.uniqueId('ingest'));
  const bodies = ids.map((id, c) => {
    const messages = syntheticMessages(perClient, { mix: 'agent', seed: seed + c, tag: id });
    const out: string[] = [];
    for (let i = 0; i < messages.length; i += BATCH) out.push(JSON.stringify({ messages: messages.slice(i, i + BATCH) }));
    return out;
  });
  for (const id of ids) await ctx.svc.api.createConversation(id, { policy: { auto: false } });
  const latencies: number[] = [];
  const stopCpu = watchCpuByRole({ 'compactd API': ctx.svc.apiChild.pid, 'bench client': process.pid });
  const started = performance.now();
  await pool(ids, clients, async (id, c) => {
    for (const body of bodies[c] as string[]) {
      const t0 = performance.now();
      await ctx.svc.api.appendBody(id, body);
      latencies.push(performance.now() - t0);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  return { rate: (clients * perClient) / seconds, latencies, cpuUs: perUnit(stopCpu(), clients * perClient, 1e6) };
}

export async function runIngest(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('ingest', '5. Ingest: messages per second through the append API');
  const perRun = ctx.quick ? 5_000 : 20_000;
  const runs = ctx.quick ? 1 : 3;
  const sample = syntheticMessages(1_000, { mix: 'agent', tag: 'probe' });
  result.setup = {
    messages: `synthetic coding-agent turns, "agent" mix: ${Math.round(jsonBytes(sample) / 1000)} bytes per message on average`,
    batch: `${BATCH} messages per request`,
    runs,
    perRun: `${perRun} messages`,
    clients: '1 (sequential requests), then 4 concurrent clients on 4 conversations',
  };
  await settleDatabase(ctx);
  const single: number[] = [];
  const latencies: number[] = [];
  const cpuRuns: Array<Record<string, number>> = [];
  for (let run = 0; run < runs; run += 1) {
    ctx.log(`ingest: ${perRun} messages, one client (run ${run + 1}/${runs})`);
    const r = await ingest(ctx, 1, perRun, 100 + run);
    single.push(r.rate);
    latencies.push(...r.latencies);
    cpuRuns.push(r.cpuUs);
  }
  const shares = cpuShares(cpuRuns, 0);
  result.tables.push({
    title: 'CPU per message by process (µs, one client, median over runs)',
    columns: ['process', 'CPU µs per message', 'share'],
    rows: shares.rows,
  });
  const cpuSummary =
    `CPU per message, all processes: ${round(shares.total, 0)} µs (` +
    shares.roles.map((role) => `${role} ${round(shares.median(role), 0)}`).join(', ') +
    `); one client's requests are sequential, so its rate is bounded by the sum along one request's path.`;
  ctx.log('ingest: four concurrent clients');
  const parallel = await ingest(ctx, 4, perRun / 4, 500);
  result.figures.push(figure('messages/s, one client', 'msg/s', single));
  result.figures.push(figure('messages/s, four clients', 'msg/s', [parallel.rate]));
  result.figures.push(figure('append latency per 500-message batch (one client)', 'ms', latencies));
  result.targets.push(target('median messages/s, one client, batches of 500', '>=', 5_000, spread(single).median, 'msg/s'));
  if (!(result.targets[0]?.met ?? true)) {
    const profile = await profileApi(ctx, 'ingest', async () => {
      await ingest(ctx, 1, ctx.quick ? 2_000 : 10_000, 900);
    });
    const text = profile?.text ?? 'the profile could not be read';
    if (result.targets[0]) result.targets[0].bottleneck = `${cpuSummary} API ${text}`;
    result.notes.push(`Profiled rerun (API with --cpu-prof): ${text}`);
  }
  result.notes.push(`Four clients at once reached ${round(parallel.rate, 0)} msg/s on this ${ctx.quick ? 'quick' : 'full'} run.`);
  result.durationMs = performance.now() - started;
  return [result];
}
