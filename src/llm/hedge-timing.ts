/**
 * When a second request is raced against a straggling summary call (a hedge), decided from
 * the length asked for and the pace this process has observed for the model. A healthy
 * answer is done by the time it could have written its whole runaway cap; a call still in
 * flight well past that is stuck or crawling, and a second request of the same step is
 * started beside it — the first to answer wins, the other is cancelled. Nothing is ever
 * retried in series after a slow answer, so the step's wall time stays near its one call's.
 * Pure: no clock, no state.
 */

export interface CallPace {
  /** wall milliseconds per output token of a whole call (first-token wait included) */
  msPerOutputToken: number;
  /** calls observed */
  samples: number;
}

/**
 * The pace assumed before a model's first call has been observed: 50 tokens/s all told,
 * slower than any listed summarizer, so the first calls are not hedged too early.
 */
export const DEFAULT_PACE: CallPace = { msPerOutputToken: 20, samples: 0 };

/** Margin beyond the time to write the whole cap before a call counts as a straggler. */
export const HEDGE_SLACK = 1.25;
/** Never hedge sooner than this: small answers on a fast model are all first-token wait and noise. */
export const HEDGE_MIN_MS = 5_000;
/** Share of a process's summary requests in flight that may be hedges (at least one). */
export const HEDGE_SHARE = 0.1;
/** Weight of the latest call in the observed pace. */
const PACE_WEIGHT = 0.3;
/** Calls with fewer output tokens say little about the rate (their time is the first-token wait). */
const MIN_OBSERVED_TOKENS = 32;

/** How long a call of max_tokens `cap` may be in flight before a hedge is started beside it. */
export function hedgeDelayMs(cap: number, pace: CallPace = DEFAULT_PACE): number {
  return Math.max(HEDGE_MIN_MS, Math.round(cap * pace.msPerOutputToken * HEDGE_SLACK));
}

/** The pace after one more completed call (an exponentially weighted mean; the first sample replaces the default). */
export function observePace(previous: CallPace | undefined, latencyMs: number, outputTokens: number): CallPace | undefined {
  if (!(outputTokens >= MIN_OBSERVED_TOKENS) || !(latencyMs >= 0)) return previous;
  const sample = latencyMs / outputTokens;
  if (previous === undefined || previous.samples === 0) return { msPerOutputToken: sample, samples: 1 };
  return { msPerOutputToken: previous.msPerOutputToken * (1 - PACE_WEIGHT) + sample * PACE_WEIGHT, samples: previous.samples + 1 };
}

/**
 * Hedges are for stragglers, not for a provider slow for everyone: when every call runs long,
 * a hedge per call would double the load on it. A process keeps its hedges in flight within
 * a tenth of its summary requests in flight (one at least).
 */
export class HedgeBudget {
  private requests = 0;
  private hedges = 0;

  /** A first request went out; the returned function ends it. */
  request(): () => void {
    this.requests += 1;
    return once(() => {
      this.requests -= 1;
    });
  }

  /** A hedge may start now: returns the function that ends it, or null when the budget is spent. */
  tryHedge(): (() => void) | null {
    if (this.hedges >= Math.max(1, Math.floor(this.requests * HEDGE_SHARE))) return null;
    this.hedges += 1;
    return once(() => {
      this.hedges -= 1;
    });
  }
}

function once(action: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    action();
  };
}

/** Observed paces by provider and model, kept for the life of a worker process. */
export class PaceBook {
  private readonly paces = new Map<string, CallPace>();

  get(provider: string, model: string): CallPace {
    return this.paces.get(`${provider}:${model}`) ?? DEFAULT_PACE;
  }

  observe(provider: string, model: string, latencyMs: number, outputTokens: number): void {
    const key = `${provider}:${model}`;
    const next = observePace(this.paces.get(key), latencyMs, outputTokens);
    if (next !== undefined) this.paces.set(key, next);
  }
}
