/**
 * In-flight work of this process by compaction job id, so a cancellation published on
 * Redis (from any API process) aborts the LLM calls running here.
 */
export interface CancelRegistry {
  /** a signal aborted when the job is cancelled or `parent` aborts; call `release` when done */
  track(jobId: string, parent?: AbortSignal): { signal: AbortSignal; release(): void };
  cancel(jobId: string): number;
}

export function createCancelRegistry(): CancelRegistry {
  const running = new Map<string, Set<AbortController>>();
  return {
    track(jobId, parent) {
      const controller = new AbortController();
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
      const set = running.get(jobId);
      if (!set) return 0;
      for (const controller of set) controller.abort(new Error(`compaction job ${jobId} cancelled`));
      return set.size;
    },
  };
}
