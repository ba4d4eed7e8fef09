import type postgres from 'postgres';

import type { LlmSim } from '../../../src/llm-sim/server.js';
import type { CallRecord } from '../../../src/llm-sim/state.js';
import type { ApiClient } from '../../lib/api-client.js';
import type { Agent } from './agent.js';
import type { ContextScore } from './probes.js';
import type { SimCounter } from './sim-count.js';

/** What every arm shares: the arms, the replay's services, and what one arm's run reports. */

export type ArmKey = 'cut' | 'parallel' | 'native' | 'auto' | 'single-call';

export interface ArmSpec {
  key: ArmKey;
  label: string;
}

export const ARMS: readonly ArmSpec[] = [
  { key: 'cut', label: 'a) no compaction (cut at the window)' },
  { key: 'parallel', label: 'b) compactd parallel (summarize)' },
  { key: 'native', label: 'c) compactd native' },
  { key: 'auto', label: 'd) compactd auto (default)' },
  { key: 'single-call', label: 'e) single call, Claude Code’s kind' },
];

export interface ReplayEnv {
  /** the llm-sim the agent and compactd's worker both call */
  sim: LlmSim;
  agent: Agent;
  /** merged into the policy of the conversations compactd's arms create */
  policy: Record<string, unknown>;
  api: ApiClient;
  sql: postgres.Sql;
  counter: SimCounter;
  /** the llm-sim profile while something runs that the agent may wait for (a compaction); `instant` otherwise */
  realisticProfile: string;
  uniqueId(prefix: string): string;
  log(message: string): void;
}

/** One session's window and trigger, in the sim's tokens. */
export interface SessionLimits {
  windowTokens: number;
  /** compactd's default trigger (policy triggerRatio × window); the single-call arm compacts there too */
  triggerTokens: number;
}

export interface CompactionEvent {
  /** the agent turn before which it happened (0-based) */
  turn: number;
  /** auto: compactd's trigger; asked: the platform asked at the same trigger (with the agent's setup); manual: asked over the window */
  kind: 'auto' | 'asked' | 'manual' | 'single-call' | 'cut';
  /** the context's tokens when the compaction started (the sim's count) */
  tokensAtStart: number;
  /** whether the agent's context was over the window while it ran: the agent had to wait for it */
  overWindow: boolean;
  /** wall time the agent blocked on it */
  waitMs: number;
  /** from the request to its commit (a compactd job's row) or the call's wall time; null for a cut */
  durationMs: number | null;
  status: string;
  /** the context's tokens the first time the agent sent it after the compaction */
  tokensAfter: number | null;
  probe: ContextScore | null;
  jobId?: string;
  /** the strategy compactd reported using, and why (job result), when it says */
  decided?: string;
}

export interface ArmRun {
  arm: ArmSpec;
  status: 'measured' | 'not measured';
  reason?: string;
  /** the sim's ids of the agent's own turn calls (the rest of `calls` are compaction calls) */
  agentCallIds: Set<number>;
  /** every call the arm made, from the sim's log */
  calls: CallRecord[];
  compactions: CompactionEvent[];
  turns: number;
  wallMs: number;
}

export function notMeasured(arm: ArmSpec, reason: string): ArmRun {
  return { arm, status: 'not measured', reason, agentCallIds: new Set(), calls: [], compactions: [], turns: 0, wallMs: 0 };
}

/** The calls of the arm in the sim's log: the log is cleared when an arm starts. */
export function armCalls(sim: LlmSim): CallRecord[] {
  return sim.callLog().filter((call) => call.outcome !== 'pending');
}
