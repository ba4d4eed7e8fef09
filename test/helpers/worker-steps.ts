import { createNativeCompactors, createSummarizers } from '../../src/llm/create-summarizer.js';
import { DEFAULT_RETRY_POLICY } from '../../src/llm/retry.js';
import { createCancelRegistry } from '../../src/worker/cancel-registry.js';
import type { WorkerDeps } from '../../src/worker/deps.js';
import type { Stack } from './stack.js';

/**
 * The worker's dependencies over a stack's real Postgres, Redis and configured providers,
 * without any BullMQ worker consuming the queues: a test calls the step processors
 * (plan, summarize, finalize) itself, in the order it wants.
 */
export function workerStepDeps(stack: Stack): WorkerDeps {
  const { deps } = stack;
  return {
    config: deps.config,
    db: deps.db,
    logger: deps.logger,
    queues: deps.queues,
    countTokens: deps.countTokens,
    summarizers: createSummarizers(deps.config, { countTokens: deps.countTokens, retryPolicy: DEFAULT_RETRY_POLICY }),
    compactors: createNativeCompactors(deps.config),
    retryPolicy: DEFAULT_RETRY_POLICY,
    cancels: createCancelRegistry(),
  };
}
