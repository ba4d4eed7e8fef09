import type { CompactdChild } from './child.js';
import type { BenchContext } from './context.js';

/**
 * Samples a worker's RSS while a conversation's latest compaction job runs, with the job's
 * status at each sample: the status in which the peak falls names the step holding the memory.
 */
export function sampleRssByPhase(ctx: BenchContext, worker: CompactdChild, conversationExternalId: string, everyMs = 100): () => Promise<Record<string, number>> {
  const peaks: Record<string, number> = {};
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const [row] = await ctx.svc.sql<Array<{ status: string }>>`
        select j.status from compaction_jobs j join conversations c on c.id = j.conversation_id
         where c.external_id = ${conversationExternalId} order by j.created_at desc limit 1`;
      const rssMb = (worker.memory()?.rssKb ?? Number.NaN) / 1024;
      const status = row?.status ?? 'before the job';
      if (Number.isFinite(rssMb)) peaks[status] = Math.max(peaks[status] ?? 0, rssMb);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return peaks;
  };
}
