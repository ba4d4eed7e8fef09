/**
 * In-flight work of this process by compaction job id, so a cancellation published on
 * Redis (from any API process) aborts the LLM calls running here.
 */
export interface CancelRegistry {
  /** a signal aborted when the job is cancelled or `parent` aborts; call `release` when done */
  track(jobId: string, parent?: AbortSignal): { signal: AbortSignal; release(): void };
  cancel(jobId: string): number;
}

/** Cancelled job ids remembered, so a step that starts just after the broadcast aborts at once. */
const REMEMBERED_CANCELS = 10_000;

export function createCancelRegistry(): CancelRegistry {
  const running = new Map<string, Set<AbortController>>();
  const cancelled = new Set<string>();
  return {
    track(jobId, parent) {
      const controller = new AbortController();
      if (cancelled.has(jobId)) controller.abort(new Error(`compaction job ${jobId} cancelled`));
      const onParentAbort = () => controller.abort(parent?.reason);
      if (parent?.aborted) controller.abort(parent.reason);
      parent?.addEventListener('abort', onParentAbort, { once: true });
      const set = running.get(jobId) ?? new Set();
      set.add(controller);
      running.set(jobId, set);
      return {
        signal: controller.signal,
        release() {
          parent?.removeEventListener('abort', onParentAbort);
          set.delete(controller);
          if (set.size === 0) running.delete(jobId);
        },
      };
    },
    cancel(jobId) {
      cancelled.add(jobId);
      if (cancelled.size > REMEMBERED_CANCELS) cancelled.delete(cancelled.values().next().value as string);
      const set = running.get(jobId);
      if (!set) return 0;
      for (const controller of set) controller.abort(new Error(`compaction job ${jobId} cancelled`));
      return set.size;
    },
  };
}
