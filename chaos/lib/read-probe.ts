import { percentile, round } from './result.js';

/**
 * A bystander: one client reading its own conversation in a loop while a scenario abuses the
 * API from another, so the figures say what the abuse costs everyone else. Every read is
 * bounded by a timeout; a read that times out is a sample of that length, not a hang.
 */

export interface ReadSample {
  /** epoch ms when the read was sent */
  at: number;
  ms: number;
  /** HTTP status, or the error of a read that got none */
  outcome: number | string;
}

export interface ReadProbe {
  /** ends the loop after the read in flight; resolves with every sample */
  stop(): Promise<ReadSample[]>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** GETs `baseUrl + path` one read after another, `pauseMs` apart, until stopped. */
export function startReadProbe(baseUrl: string, key: string, path: string, options: { timeoutMs: number; pauseMs?: number }): ReadProbe {
  const samples: ReadSample[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      const started = performance.now();
      let outcome: number | string;
      try {
        const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(options.timeoutMs) });
        await res.arrayBuffer();
        outcome = res.status;
      } catch (error) {
        outcome = (error as Error).name === 'TimeoutError' ? 'timeout' : (error as Error).message;
      }
      samples.push({ at, ms: performance.now() - started, outcome });
      if (options.pauseMs) await pause(options.pauseMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

/** Samples of reads that were in flight at some moment of [from, until] (epoch ms). */
export function overlapping(samples: readonly ReadSample[], from: number, until: number): ReadSample[] {
  return samples.filter((s) => s.at <= until && s.at + s.ms >= from);
}

export interface ReadFigures {
  reads: number;
  p50: number;
  max: number;
  /** reads that did not answer 200 (status or error) */
  failed: number;
}

export function readFigures(samples: readonly ReadSample[]): ReadFigures {
  const ms = samples.map((s) => s.ms);
  return {
    reads: samples.length,
    p50: round(percentile(ms, 50)),
    max: round(ms.length === 0 ? Number.NaN : ms.reduce((a, b) => Math.max(a, b), 0)),
    failed: samples.filter((s) => s.outcome !== 200).length,
  };
}
