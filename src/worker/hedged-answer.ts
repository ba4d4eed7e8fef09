import { keepCutAnswer } from '../compaction/summarize/index.js';
import type { SummarizeRequest } from '../compaction/types.js';
import { type CallPace, HedgeBudget, hedgeDelayMs } from '../llm/hedge-timing.js';
import { LlmError, type SummarizeOptions } from '../llm/port.js';

/**
 * The provider's answer to one summary step, with no serial retry after a slow answer:
 * - the request asks for `budget` tokens and is sent with max_tokens `cap`, headroom above it,
 *   so an answer that overruns its length by a third is not cut;
 * - an answer cut at the cap that still holds its sections is kept (cut-answer.ts);
 * - a call still in flight when a healthy one would long have written its whole cap (see
 *   hedge-timing.ts) gets a second request of the same step raced beside it; the first usable
 *   answer wins and the other request is cancelled through its AbortSignal. The hedge's clock
 *   runs only while an attempt is at the provider (not while the limiter or a backoff holds it),
 *   and a process keeps its hedges within a tenth of its requests in flight (HedgeBudget), so a
 *   provider slow for everyone is not sent twice the load.
 * A runaway answer cut before its last section is the one case a request follows another:
 * it asks for half the length under the same cap, so the step takes at most about 1.5× its
 * longest call rather than twice.
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

type Outcome = { ok: true; text: string } | { ok: false; error: unknown };

/** What a second request asks for after a runaway answer never reached its last section. */
export function tighterTarget(budget: number): number {
  return Math.max(1, Math.ceil(budget / 2));
}

export async function answerWithinCap(input: CappedAnswerInput): Promise<string> {
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
    if (!outcome.ok && isCutShort(outcome.error) && !input.signal.aborted) {
      const shorter = input.buildRequest(tighterTarget(input.budget), input.cap);
      outcome = await race.start((signal) => sendKeepingCut(input.send, shorter, { signal }));
    }
    if (outcome.ok) return outcome.text;
    throw outcome.error;
  } finally {
    straggler.stop();
    race.cancelAll();
    endRequest();
    endHedge?.();
  }
}

/** An answer cut at the cap that holds its sections is an answer; one that does not stays an error. */
async function sendKeepingCut(
  send: SendAnswer,
  request: SummarizeRequest,
  options: Pick<SummarizeOptions, 'signal' | 'onAttempt'>,
): Promise<string> {
  try {
    return await send(request, options);
  } catch (error) {
    const kept = error instanceof LlmError && error.cut !== undefined ? keepCutAnswer(error.cut.text) : null;
    if (kept === null) throw error;
    return kept;
  }
}

function isCutShort(error: unknown): boolean {
  return error instanceof LlmError && error.code === 'LLM_OUTPUT_TRUNCATED';
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

  start(run: (signal: AbortSignal) => Promise<string>): Promise<Outcome> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(this.parent.reason);
    if (this.parent.aborted) forward();
    else this.parent.addEventListener('abort', forward, { once: true });
    this.controllers.push(controller);
    return run(controller.signal)
      .then(
        (text): Outcome => ({ ok: true, text }),
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
