import { ACTIVE_JOB_STATUSES, type JobStatus } from '../../../src/db/schema/jobs.js';
import type { FailedJob } from '../../lib/job-errors.js';
import type { ScenarioRecorder } from '../../lib/result.js';
import type { ChaosStack } from '../../lib/stack.js';

/**
 * What the parts of the abuse suite share: the recorder, where logs go, and the failed jobs
 * each part saw (checked for leaked internals at the end). Every part measures the product
 * from outside, over HTTP (and /proc for memory), so it runs against any version of it.
 */

export interface AbuseContext {
  rec: ScenarioRecorder;
  logDir?: string;
  failedJobs: FailedJob[];
}

/** SPEC §8 and issue 26's targets, held the same in both variants. */
export const TARGETS = {
  appendMs: 3_000,
  bystanderReadMaxMs: 500,
  searchMs: 3_000,
  searchBodyBytes: 64 * 1024,
  postgresGrowthMb: 512,
  waitingReadP50Ms: 50,
  waitingReadMaxMs: 1_000,
  exportGrowthMb: 256,
} as const;

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function stackOptions(ctx: AbuseContext): { logDir?: string } {
  return ctx.logDir ? { logDir: ctx.logDir } : {};
}

export const isActive = (status: string): boolean => ACTIVE_JOB_STATUSES.includes(status as JobStatus);

export interface JobOutcome {
  status: string;
  /** from the request to the terminal status (or the deadline), as the client saw it */
  seconds: number;
  error: unknown;
}

/**
 * Long-polls a job until it is terminal or `timeoutMs` has passed (then its last status is
 * the figure). A failing read is retried until the deadline: the API may be the thing that
 * is struggling.
 */
export async function waitForJob(baseUrl: string, key: string, jobId: string, timeoutMs: number): Promise<JobOutcome> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let last: { status: string; error: unknown } = { status: 'unknown', error: null };
  while (Date.now() < deadline) {
    const wait = Math.max(1, Math.min(20, Math.floor((deadline - Date.now()) / 1000)));
    try {
      const res = await fetch(`${baseUrl}/v1/jobs/${jobId}?wait=${wait}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(wait * 1000 + 10_000),
      });
      if (res.status === 200) {
        last = (await res.json()) as { status: string; error: unknown };
        if (!isActive(last.status)) break;
      } else {
        await res.arrayBuffer();
        await pause(500);
      }
    } catch {
      await pause(500);
    }
  }
  return { ...last, seconds: (Date.now() - started) / 1000 };
}

/** POST /v1/conversations/:id/compactions; the job id (throws on anything but 200/202). */
export async function requestCompaction(
  baseUrl: string,
  key: string,
  conversationId: string,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/conversations/${conversationId}/compactions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status !== 200 && res.status !== 202) throw new Error(`compact ${conversationId}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** compactd processes of `stack` that exited on their own since `from` (epoch ms), held to zero. */
export function expectNoCrash(rec: ScenarioRecorder, label: string, stack: ChaosStack, from: number): void {
  const crashes = stack.crashes.filter((c) => c.at >= from);
  rec.expect(`${label}: compactd processes that crashed`, crashes.length, '==', 0);
  for (const crash of crashes.slice(0, 2))
    rec.note(`${label}: CRASH of ${crash.name} (exit ${crash.exit}): ${crash.tail.replace(/\s*\n\s*/g, ' | ').slice(0, 500)}`);
}
