import type { Phase } from '../obs/metrics.js';
import { enqueueSummarizeFlow, type QueuedJobRef } from '../queue/producer.js';
import type { WorkerDeps } from './deps.js';
import { processFinalize, type FinalizeDeps } from './processors/finalize.js';
import { processSummarizeChunk, type SummarizeDeps } from './processors/summarize.js';

export type ChunkStepsDeps = SummarizeDeps & FinalizeDeps & Pick<WorkerDeps, 'metrics'>;

/**
 * After the plan: a small plan (at most `COMPACTD_INLINE_CHUNKS` chunks) runs its chunk calls
 * in parallel and then its commit right here, in the plan step. Each queue hop costs tens of
 * milliseconds and several Redis round trips, more than everything else a small compaction
 * does. Durability is the flow's: every chunk result is memoized in Postgres before it counts,
 * so a crash retries the plan step, which finds the plan and the finished chunks and pays
 * only for what is missing. Anything but a clean run (a failed call, a provider asking to
 * back off) hands the rest to the summarize queue, whose steps have their own attempts and
 * deferral; chunks already done are skipped there too. Larger plans fan out at once, so
 * their calls spread over every worker process.
 */
export async function runChunkSteps(deps: ChunkStepsDeps, job: QueuedJobRef, chunkCount: number, signal?: AbortSignal): Promise<void> {
  if (chunkCount === 0 || chunkCount > deps.config.queue.inlineChunks) {
    await enqueueSummarizeFlow(deps.queues, job, chunkCount);
    return;
  }
  const steps = await Promise.allSettled(
    Array.from({ length: chunkCount }, (_, chunkIndex) => timedPhase(deps, 'summarize', () => processSummarizeChunk({ jobId: job.id, chunkIndex }, deps, signal))),
  );
  const failed = steps.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    deps.logger.info({ jobId: job.id, err: failed.reason }, 'inline chunk step did not finish; the summarize queue takes over');
    await enqueueSummarizeFlow(deps.queues, job, chunkCount);
    return;
  }
  await timedPhase(deps, 'finalize', () => processFinalize({ jobId: job.id }, deps, signal));
}

async function timedPhase<T>(deps: Pick<WorkerDeps, 'metrics'>, phase: Phase, run: () => Promise<T>): Promise<T> {
  const stop = deps.metrics?.phaseDuration.startTimer({ phase });
  try {
    const result = await run();
    stop?.({ outcome: 'ok' });
    return result;
  } catch (error) {
    stop?.({ outcome: 'error' });
    throw error;
  }
}
