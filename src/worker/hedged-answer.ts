import { completeLines } from '../compaction/summarize/index.js';
import type { SummarizeRequest } from '../compaction/types.js';
import { type CallPace, HedgeBudget, hedgeDelayMs } from '../llm/hedge-timing.js';
import { LlmError, type SummarizeOptions } from '../llm/port.js';

/**
 * The provider's answer to one summary step, with no serial retry after a slow answer:
 * - the request asks for `budget` tokens and is sent with max_tokens `cap`, headroom above it,
 *   so an answer that overruns its length by a third is not cut;
 * - an answer cut at the cap is kept, up to its last complete line, whatever the cap cut off
 *   (the caller completes the sections it never reached without a call: cut-answer.ts);
 * - a call still in flight when a healthy one would long have written its whole cap (see
 *   hedge-timing.ts) gets a second request of the same step raced beside it; the first usable
 *   answer wins and the other request is cancelled through its AbortSignal. The hedge's clock
 *   runs only while an attempt is at the provider (not while the limiter or a backoff holds it),
 *   and a process keeps its hedges within a tenth of its requests in flight (HedgeBudget), so a
 *   provider slow for everyone is not sent twice the load.
 * No request ever follows another in series, whatever the model writes: a model told to keep
 * every path and error may fill any cap, and asking it again for less would double the step.
 */

export type SendAnswer = (request: SummarizeRequest, options: Pick<SummarizeOptions, 'signal' | 'onAttempt'>) => Promise<string>;

export interface CappedAnswerInput {
  budget: number;
  cap: number;
  buildRequest(target: number, cap?: number): SummarizeRequest;
  pace: CallPace;
  signal: AbortSignal;
  send: SendAnswer;
  /** the process's hedges in flight, within a share of its requests (default: this process's) */
  hedges?: HedgeBudget;
}

/** This process's hedges: every summary step of a worker shares the one budget. */
const PROCESS_HEDGES = new HedgeBudget();

/** The step's answer: what the model wrote, and whether the cap stopped it (then `text` ends at its last complete line). */
export interface CappedAnswer {
  text: string;
  cut: boolean;
}

type Outcome = { ok: true; answer: CappedAnswer } | { ok: false; error: unknown };

export async function answerWithinCap(input: CappedAnswerInput): Promise<CappedAnswer> {
  const race = new StepRace(input.signal);
  const straggler = stragglerClock(hedgeDelayMs(input.cap, input.pace));
  const request = input.buildRequest(input.budget, input.cap);
  const budget = input.hedges ?? PROCESS_HEDGES;
  const endRequest = budget.request();
  let endHedge: (() => void) | null = null;
  try {
    const first = race.start((signal) => sendKeepingCut(input.send, request, { signal, onAttempt: straggler.onAttempt }));
    const early = await Promise.race([first, straggler.fired]);
    endHedge = early === HEDGE ? budget.tryHedge() : null;
    let outcome: Outcome;
    if (early === HEDGE && endHedge !== null) {
      const hedge = race.start((signal) => sendKeepingCut(input.send, request, { signal }));
      outcome = await firstUsable([first, hedge]);
    } else {
      // no hedge (none due, or the process's share of hedges is in flight): the first request answers
      outcome = early === HEDGE ? await first : early;
    }
    straggler.stop();
    if (outcome.ok) return outcome.answer;
    throw outcome.error;
  } finally {
    straggler.stop();
    race.cancelAll();
    endRequest();
    endHedge?.();
  }
}

/** An answer cut at the cap is an answer, up to its last complete line; one cut before any complete line stays an error. */
async function sendKeepingCut(
  send: SendAnswer,
  request: SummarizeRequest,
  options: Pick<SummarizeOptions, 'signal' | 'onAttempt'>,
): Promise<CappedAnswer> {
  try {
    return { text: await send(request, options), cut: false };
  } catch (error) {
    const kept = error instanceof LlmError && error.cut !== undefined ? completeLines(error.cut.text) : '';
    if (kept === '') throw error;
    return { text: kept, cut: true };
  }
}

const HEDGE = Symbol('hedge');

/** Fires once an attempt has been at the provider for `delayMs` without answering; re-armed per attempt. */
function stragglerClock(delayMs: number): { fired: Promise<typeof HEDGE>; onAttempt: (phase: 'start' | 'end') => void; stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let fire: (value: typeof HEDGE) => void = () => undefined;
  const fired = new Promise<typeof HEDGE>((resolve) => {
    fire = resolve;
  });
  const stop = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return {
    fired,
    onAttempt: (phase) => {
      stop();
      if (phase === 'start') timer = setTimeout(() => fire(HEDGE), delayMs);
    },
    stop,
  };
}

/** The requests of one step, each cancellable on its own and all with the step's signal. */
class StepRace {
  private readonly controllers: AbortController[] = [];

  constructor(private readonly parent: AbortSignal) {}

  start(run: (signal: AbortSignal) => Promise<CappedAnswer>): Promise<Outcome> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(this.parent.reason);
    if (this.parent.aborted) forward();
    else this.parent.addEventListener('abort', forward, { once: true });
    this.controllers.push(controller);
    return run(controller.signal)
      .then(
        (answer): Outcome => ({ ok: true, answer }),
        (error: unknown): Outcome => ({ ok: false, error }),
      )
      .finally(() => this.parent.removeEventListener('abort', forward));
  }

  /** Cancels whatever is still in flight: the step has its answer (or has failed). */
  cancelAll(): void {
    for (const controller of this.controllers) {
      if (!controller.signal.aborted) controller.abort(new LlmError('cancelled', 'another request of this summary step answered first'));
    }
  }
}

/** The first usable outcome; when every request fails, the first request's failure. */
function firstUsable(attempts: ReadonlyArray<Promise<Outcome>>): Promise<Outcome> {
  return new Promise((resolve) => {
    const failures: Outcome[] = [];
    let pending = attempts.length;
    attempts.forEach((attempt, i) => {
      void attempt.then((outcome) => {
        if (outcome.ok) return resolve(outcome);
        failures[i] = outcome;
        pending -= 1;
        if (pending === 0) resolve(failures.find((f) => f !== undefined) ?? outcome);
      });
    });
  });
}
