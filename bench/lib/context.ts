import type { NormalizedMessage } from '../../src/compaction/types.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import type { JobView } from './api-client.js';
import { type JobRowTimes, type JobTiming, jobTiming, readJob } from './job-timing.js';
import type { BenchServices } from './services.js';

/** What every scenario gets: the running service, the mode, a log, and the chart being built. */

export interface ChartPoint {
  strategy: string;
  tokens: number;
  seconds: number;
  ok: boolean;
  label: string;
}

export interface BenchContext {
  svc: BenchServices;
  quick: boolean;
  /** where `--cpu-prof` profiles go */
  profileDir: string;
  chart: ChartPoint[];
  log(message: string): void;
  /** a conversation id unique to this bench run */
  uniqueId(prefix: string): string;
  /** the scenario ids asked for with `--only` (null: all) */
  only?: readonly string[] | null;
  /** what `--sessions`, `--arms` and `--policy` narrowed (session-cost) */
  scenarioOptions?: ScenarioOptions;
}

export interface ScenarioOptions {
  /** session id prefixes */
  sessions?: readonly string[] | undefined;
  arms?: readonly string[] | undefined;
  /** merged into the policy of the conversations compactd's arms create */
  policy?: Record<string, unknown> | undefined;
}

let counter = 0;
export function makeUniqueId(stamp: string): (prefix: string) => string {
  return (prefix) => `${prefix}-${stamp}-${(counter += 1)}`;
}

/** Creates a conversation with auto-compaction off (the bench decides when to compact) and appends the messages. */
export async function seedConversation(
  ctx: BenchContext,
  id: string,
  messages: readonly NormalizedMessage[],
  policy: Record<string, unknown> = {},
): Promise<void> {
  await ctx.svc.api.createConversation(id, { policy: { auto: false, ...policy } });
  await ctx.svc.api.append(id, messages);
}

export interface MeasuredJob {
  view: JobView;
  row: JobRowTimes;
  timing: JobTiming;
  /** every call of the job and of the consolidation it recorded (off its path, but paid for) */
  allCalls: CallRecord[];
}

/** One compaction, alone on the service: the sim's log is cleared first, so its calls are this job's. */
export async function compactMeasured(
  ctx: BenchContext,
  id: string,
  options: Record<string, unknown> = { strategy: 'summarize' },
): Promise<MeasuredJob> {
  ctx.svc.sim.reset();
  const enqueued = await ctx.svc.api.compact(id, options);
  const view = await ctx.svc.api.waitForJob(enqueued.id);
  const row = await readJob(ctx.svc.sql, enqueued.id);
  const calls = ctx.svc.sim.callLog().filter((c) => c.outcome !== 'pending');
  const timing = jobTiming(row, calls, ctx.svc.worker);
  // The compaction never waits for its consolidation; the bench does, after timing it, so the
  // next measurement starts on an idle service and the token count includes what it cost.
  const followUp = view.result?.['consolidationJobId'];
  if (typeof followUp === 'string') await ctx.svc.api.waitForJob(followUp);
  return { view, row, timing, allCalls: ctx.svc.sim.callLog().filter((c) => c.outcome !== 'pending') };
}

export function assertCompleted(job: MeasuredJob, what: string): void {
  if (job.view.status !== 'completed') {
    throw new Error(`${what}: job ${job.view.id} ended ${job.view.status} ${JSON.stringify(job.view.error ?? job.view.result)}`);
  }
}

/**
 * Vacuums the bench database before a scenario that measures CPU: the rows earlier scenarios
 * archived and deleted would otherwise be cleaned up by autovacuum during this one, and
 * counted as its Postgres CPU.
 */
export async function settleDatabase(ctx: BenchContext): Promise<void> {
  ctx.log('vacuuming the bench database (earlier scenarios leave dead rows behind)');
  await ctx.svc.sql`vacuum (analyze)`;
}
