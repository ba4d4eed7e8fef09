import { beforeFinalDirective, isMergeRequest, REPAIR_HEADING } from '../../src/compaction/summarize/prompt.js';
import type { SimFaults } from '../../src/llm-sim/faults.js';
import { type LlmSim, startLlmSim } from '../../src/llm-sim/server.js';
import type { CallRecord } from '../../src/llm-sim/state.js';

/**
 * One in-process llm-sim per worker process, so every LLM call is attributed to the process
 * that made it: when a worker is SIGKILLed, only its own calls can have been "in flight".
 */

export interface WorkerCall extends CallRecord {
  worker: string;
}

export interface SimFleet {
  /** a new sim for a worker; pass `env(sim)` to that worker */
  add(worker: string): Promise<LlmSim>;
  calls(): WorkerCall[];
  setProfile(profile: string): void;
  setFaults(faults: SimFaults): void;
  inFlight(worker?: string): number;
  close(): Promise<void>;
}

export function simEnv(sim: Pick<LlmSim, 'url'>, model = 'claude-haiku-4-5'): Record<string, string> {
  return { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: `anthropic:${model}` };
}

export function createSimFleet(options: { profile?: string; faults?: SimFaults; seed?: number } = {}): SimFleet {
  const sims = new Map<string, LlmSim>();
  let profile = options.profile ?? 'instant';
  let faults = options.faults ?? {};
  let seed = options.seed ?? 1;
  return {
    async add(worker) {
      // Each sim draws its own faults; distinct seeds keep the workers' fault sequences apart.
      const sim = await startLlmSim({ host: '127.0.0.1', port: 0, keepBodies: 1_000_000, profile, faults, seed: seed++ });
      sims.set(worker, sim);
      return sim;
    },
    calls: () => [...sims].flatMap(([worker, sim]) => sim.callLog().map((call) => ({ ...call, worker }))),
    setProfile(next) {
      profile = next;
      for (const sim of sims.values()) sim.setProfile(next);
    },
    setFaults(next) {
      faults = next;
      for (const sim of sims.values()) sim.setFaults(next);
    },
    inFlight: (worker) => (worker ? (sims.get(worker)?.inFlight() ?? 0) : [...sims.values()].reduce((sum, sim) => sum + sim.inFlight(), 0)),
    close: async () => {
      await Promise.all([...sims.values()].map((sim) => sim.close()));
    },
  };
}

type Body = { system?: unknown; messages?: Array<{ role: string; content: unknown }> };

/**
 * The step a call belongs to: its request without the final directive. The first answer
 * and any second request of one chunk (a hedge, a shorter one) share it; different chunks never do.
 */
export function stepKey(body: unknown): string {
  const b = body as Body;
  // beforeFinalDirective also blanks the fence's random ID, which a retried step draws anew
  const messages = (b.messages ?? []).map((m) => ({
    role: m.role,
    content: beforeFinalDirective(typeof m.content === 'string' ? m.content : JSON.stringify(m.content)),
  }));
  return JSON.stringify([b.system ?? null, messages]);
}

/** The optional identifier repair call (`identifierRepair: call`). */
export function isRepairCall(body: unknown): boolean {
  return JSON.stringify(body ?? null).includes(REPAIR_HEADING);
}

/** A consolidation's merge call (a follow-up job of its own). */
export function isConsolidationCall(body: unknown): boolean {
  return isMergeRequest(JSON.stringify(body ?? null));
}

export interface RepeatReport {
  /** successful calls whose identical request had already been answered and persisted */
  repeatedFinished: number;
  /** repeats of an answer that arrived just before a disruption that could lose it (allowed) */
  repeatedInFlight: number;
  okCalls: number;
  /** the repeats of finished steps, described (first few) */
  examples: string[];
}

/**
 * A moment the answer of a call in flight could be lost before it was saved: a worker's
 * SIGKILL (that worker's calls only; `untilMs` Infinity, as a killed process never reads
 * an answer the sim finishes writing after the signal) or an outage (every worker's calls).
 */
export interface Disruption {
  worker?: string;
  fromMs: number;
  untilMs: number;
}

/**
 * A call repeats a finished step when an earlier call with the identical request had been
 * answered (ok) and no disruption hit that answer within `graceMs` (the time to persist it):
 * the only repeats SPEC §5.6 allows are of calls in flight when a worker died.
 */
export function repeatedCalls(calls: readonly WorkerCall[], disruptions: readonly Disruption[], graceMs: number): RepeatReport {
  const ok = calls.filter((c) => c.outcome === 'ok' && c.body !== undefined).sort((a, b) => a.startMs - b.startMs);
  const answered = new Map<string, WorkerCall[]>();
  const report: RepeatReport = { repeatedFinished: 0, repeatedInFlight: 0, okCalls: ok.length, examples: [] };
  const inFlightAtDisruption = (c: WorkerCall) =>
    disruptions.some(
      (d) => (d.worker === undefined || d.worker === c.worker) && (c.endMs ?? 0) >= d.fromMs - graceMs && (c.endMs ?? 0) <= d.untilMs,
    );
  for (const call of ok) {
    const body = JSON.stringify(call.body);
    const earlier = (answered.get(body) ?? []).filter((c) => (c.endMs ?? Number.POSITIVE_INFINITY) <= call.startMs);
    if (earlier.length > 0) {
      if (earlier.every(inFlightAtDisruption)) report.repeatedInFlight += 1;
      else {
        report.repeatedFinished += 1;
        const first = earlier[0] as WorkerCall;
        if (report.examples.length < 5) {
          report.examples.push(
            `${isRepairCall(call.body) ? 'repair call' : isConsolidationCall(call.body) ? 'consolidation' : 'chunk call'} answered by ${first.worker} at ${first.endMs}, ` +
              `sent again by ${call.worker} at ${call.startMs} (+${call.startMs - (first.endMs ?? 0)} ms)`,
          );
        }
      }
    }
    answered.set(body, [...(answered.get(body) ?? []), call]);
  }
  return report;
}
