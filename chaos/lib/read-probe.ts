import { percentile, round } from './result.js';

/**
 * A bystander: one client reading its own conversation on a schedule while a scenario abuses
 * the API from another, so the figures say what the abuse costs everyone else. Reads are sent
 * every `everyMs` whether or not the last one answered (a slow answer does not hide the reads
 * that would have waited behind it), at most `maxInFlight` at once. Every read is bounded by a
 * timeout; a read that times out is a sample of that length, not a hang.
 */

export interface ReadSample {
  /** epoch ms when the read was sent */
  at: number;
  ms: number;
  /** HTTP status, or the error of a read that got none */
  outcome: number | string;
}

export interface ReadProbe {
  /** stops sending; resolves with every sample once the reads in flight have ended */
  stop(): Promise<ReadSample[]>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function read(url: string, key: string, timeoutMs: number): Promise<ReadSample> {
  const at = Date.now();
  const started = performance.now();
  let outcome: number | string;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    outcome = res.status;
  } catch (error) {
    outcome = (error as Error).name === 'TimeoutError' ? 'timeout' : (error as Error).message;
  }
  return { at, ms: performance.now() - started, outcome };
}

/** GETs `baseUrl + path` every `everyMs` until stopped. */
export function startReadProbe(
  baseUrl: string,
  key: string,
  path: string,
  options: { timeoutMs: number; everyMs: number; maxInFlight?: number },
): ReadProbe {
  const samples: ReadSample[] = [];
  const inFlight = new Set<Promise<void>>();
  const maxInFlight = options.maxInFlight ?? 50;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      if (inFlight.size < maxInFlight) {
        const pending: Promise<void> = read(`${baseUrl}${path}`, key, options.timeoutMs).then((sample) => {
          samples.push(sample);
          inFlight.delete(pending);
        });
        inFlight.add(pending);
      }
      await pause(options.everyMs);
    }
    await Promise.all(inFlight);
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return samples.sort((a, b) => a.at - b.at);
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
