import type { Queue } from 'bullmq';

import { JOBS } from './catalog.js';

/**
 * Arms (or pushes back) the idle check of a conversation (SPEC §5.1, `schedule: idle`).
 *
 * BullMQ deduplication in debounce mode does the "pushed back by each append" part in one
 * Lua script: with `replace`, a check still delayed is removed and this one takes its
 * place with a fresh delay; with `keepLastIfActive`, a check added while one is running is
 * kept and created when the running one finishes, so an append during a check is never
 * lost. The dedup key has no TTL and is dropped when its job completes or fails.
 */
export async function scheduleIdleCheck(queue: Pick<Queue, 'add'>, conversationId: string, delayMs: number): Promise<void> {
  const payload = JOBS.idleCheck.schema.parse({ conversationId });
  await queue.add(JOBS.idleCheck.name, payload, {
    ...JOBS.idleCheck.options,
    delay: Math.max(0, Math.round(delayMs)),
    deduplication: { id: JOBS.idleCheck.deduplicationId(payload), replace: true, keepLastIfActive: true },
  });
}
