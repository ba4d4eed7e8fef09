import type { CompactdProcess } from '../../harness/index.js';
import type { BenchContext } from './context.js';

/** Peaks of one job status: the process's RSS and, when its /metrics is reachable, its V8 heap in use. */
export interface PhaseMemory {
  rssMb: number;
  heapUsedMb: number;
}

/** `compactd_nodejs_heap_size_used_bytes` from a worker's /metrics, in MB; NaN when unreachable. */
async function heapUsedMb(metricsUrl: string | null): Promise<number> {
  if (metricsUrl === null) return Number.NaN;
  try {
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(1_000) })).text();
    const line = text.split('\n').find((l) => l.startsWith('compactd_nodejs_heap_size_used_bytes '));
    return line ? Number(line.split(' ')[1]) / 1048576 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * Samples a worker's memory while a conversation's latest compaction job runs, with the job's
 * status at each sample: the status in which the peak falls names the step holding the
 * memory, and the heap figure tells JavaScript objects from buffers and native memory.
 */
export function sampleMemoryByPhase(
  ctx: BenchContext,
  worker: CompactdProcess,
  conversationExternalId: string,
  metricsUrl: string | null,
  everyMs = 100,
): () => Promise<Record<string, PhaseMemory>> {
  const peaks: Record<string, PhaseMemory> = {};
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const [row] = await ctx.svc.sql<Array<{ status: string }>>`
        select j.status from compaction_jobs j join conversations c on c.id = j.conversation_id
         where c.external_id = ${conversationExternalId} order by j.created_at desc limit 1`;
      const rssMb = (worker.memory()?.rssKb ?? Number.NaN) / 1024;
      const heap = await heapUsedMb(metricsUrl);
      const peak = (peaks[row?.status ?? 'before the job'] ??= { rssMb: 0, heapUsedMb: 0 });
      if (Number.isFinite(rssMb)) peak.rssMb = Math.max(peak.rssMb, rssMb);
      if (Number.isFinite(heap)) peak.heapUsedMb = Math.max(peak.heapUsedMb, heap);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return peaks;
  };
}
