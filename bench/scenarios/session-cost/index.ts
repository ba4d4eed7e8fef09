import { DEFAULT_POLICY } from '../../../src/config/policy.js';
import { findModel } from '../../../src/llm/models.js';
import { startLlmSim } from '../../../src/llm-sim/server.js';
import type { BenchContext, ScenarioOptions } from '../../lib/context.js';
import { LONG_SESSIONS } from '../../lib/conversations.js';
import { emptyScenario, type ScenarioResult } from '../../lib/result.js';
import { BENCH_LLM_ENV } from '../../lib/services.js';
import { SESSION_COST_ID } from '../../report/session-cost-svg.js';
import { AGENT_MODEL, AGENT_SYSTEM_PROMPT, createAgent } from './agent.js';
import { type ArmRun, ARMS, type ArmSpec, notMeasured, type ReplayEnv, type SessionLimits } from './arm.js';
import { replayCompactd } from './arm-compactd.js';
import { replayCut } from './arm-cut.js';
import { replaySingleCall } from './arm-single-call.js';
import { compactionTable, costFigures, costTable, type SessionRuns, sessionTargets, tokenTable } from './report.js';
import { loadReplaySession, type ReplaySession } from './sessions.js';
import { SimCounter } from './sim-count.js';

/**
 * Scenario "a session's cost" (issue 33): each long Claude Code session replayed as its agent
 * ran it — one model call per assistant turn with the whole context, Anthropic prompt caching
 * as Claude Code uses it — under five ways of staying within the window: none (cut), compactd
 * parallel, compactd native, compactd auto, and the single-call compaction of Claude Code's
 * kind. Per session and arm: the cost of every call priced from the sim's billed usage, the
 * agent's wait at each compaction, the continuation-probe score of each context it continued
 * from, and the tokens.
 *
 * The agent and compactd's worker call one llm-sim of this scenario's own (its call log holds
 * the arm's calls only, no request bodies kept), with one organization key, so a provider
 * compaction could read the agent's cache. Time matters only while a compaction runs: then
 * the sim answers every call (the compaction's and the agent's turns) on a model's clock;
 * between compactions the agent's calls are answered at once, which changes no cost.
 */

export const SESSION_COST_TITLE =
  '10. A session’s cost: compactd against no compaction and a single-call compaction, prompt caching priced';

/** Claude's window of the agent's model, in Claude's tokens. */
const CLAUDE_WINDOW_TOKENS = 200_000;
const QUICK_MESSAGES = 120;
const REPLAY_FAILED = 'the replay failed';
/** quick variant: the window sits this far below the truncated session's end, so it is reached */
const QUICK_WINDOW_SHARE = 0.9;

export interface SessionCostOptions {
  sessions: readonly string[];
  maxMessages?: number;
  /** the sim's profile while a compaction runs */
  realisticProfile: string;
  arms: readonly ArmSpec[];
  /** merged into the policy of the conversations compactd's arms create (default: none, compactd's defaults) */
  policy?: Record<string, unknown>;
}

export function sessionCostOptions(quick: boolean, narrowed: ScenarioOptions = {}): SessionCostOptions {
  const base: SessionCostOptions = quick
    ? { sessions: [LONG_SESSIONS[0]], maxMessages: QUICK_MESSAGES, realisticProfile: 'fixed:500', arms: ARMS }
    : { sessions: LONG_SESSIONS, realisticProfile: 'haiku', arms: ARMS };
  const sessions = narrowed.sessions
    ? LONG_SESSIONS.filter((id) => narrowed.sessions?.some((prefix) => id.startsWith(prefix)))
    : base.sessions;
  const arms = narrowed.arms ? ARMS.filter((arm) => narrowed.arms?.includes(arm.key)) : base.arms;
  if (sessions.length === 0) throw new Error(`--sessions ${narrowed.sessions?.join(',')} names none of ${LONG_SESSIONS.join(', ')}`);
  if (arms.length === 0) throw new Error(`--arms ${narrowed.arms?.join(',')} names none of ${ARMS.map((a) => a.key).join(', ')}`);
  return { ...base, sessions, arms, ...(narrowed.policy ? { policy: narrowed.policy } : {}) };
}

export async function runSessionCost(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const options = sessionCostOptions(ctx.quick, ctx.scenarioOptions);
  const sessions = await replaySessions(ctx, options);
  const result = sessionCostResult(options, sessions);
  result.durationMs = performance.now() - started;
  return [result];
}

/** The scenario's report from the replays: setup, tables, per-arm figures, targets, notes. */
export function sessionCostResult(options: SessionCostOptions, sessions: readonly SessionRuns[]): ScenarioResult {
  const result = emptyScenario(SESSION_COST_ID, SESSION_COST_TITLE);
  result.setup = setupOf(options, sessions);
  result.tables.push(costTable(sessions), compactionTable(sessions), tokenTable(sessions));
  costFigures(sessions, result);
  result.targets.push(...sessionTargets(sessions));
  result.notes.push(...notesOf(sessions, options));
  return result;
}

/** Every session under every arm; the worker is pointed at this scenario's sim for the run and restored after. */
export async function replaySessions(ctx: BenchContext, options: SessionCostOptions): Promise<SessionRuns[]> {
  const sim = await startLlmSim({ host: '127.0.0.1', port: 0, keepBodies: 1, logLimit: 200_000 });
  // the worker's provider key: the agent uses the same organization (compactd's placeholder when none is set)
  const key = ctx.svc.env['ANTHROPIC_API_KEY'] ?? process.env['ANTHROPIC_API_KEY'] ?? 'not-needed';
  try {
    const workerEnv = { ANTHROPIC_BASE_URL: sim.url, OPENAI_BASE_URL: `${sim.url}/v1` };
    await ctx.svc.startWorker(workerEnv);
    const out: SessionRuns[] = [];
    for (const id of options.sessions) {
      const session = loadReplaySession(id, options.maxMessages);
      const env: ReplayEnv = {
        sim,
        agent: createAgent(sim.url, key),
        api: ctx.svc.api,
        sql: ctx.svc.sql,
        counter: new SimCounter(),
        realisticProfile: options.realisticProfile,
        policy: options.policy ?? {},
        uniqueId: ctx.uniqueId,
        log: ctx.log,
      };
      const limits = sessionLimits(env.counter, session, options.maxMessages !== undefined);
      const runs: ArmRun[] = [];
      for (const arm of options.arms) {
        const run = await replayArm(env, session, limits, arm);
        runs.push(run);
        // a failed arm may leave a job running: the next arm starts with a fresh worker, so its log holds its own calls only
        if (run.reason?.startsWith(REPLAY_FAILED)) await ctx.svc.startWorker(workerEnv);
      }
      out.push({ session: id.slice(0, 8), windowTokens: limits.windowTokens, triggerTokens: limits.triggerTokens, runs });
    }
    return out;
  } finally {
    await sim.close();
    await ctx.svc.startWorker();
  }
}

/** One arm over one session, on a cleared log and an empty cache; a failure is reported, not thrown. */
async function replayArm(env: ReplayEnv, session: ReplaySession, limits: SessionLimits, arm: ArmSpec): Promise<ArmRun> {
  env.log(`session-cost: ${session.id.slice(0, 8)} ${arm.label} (${session.turns.length} turns, window ${limits.windowTokens} tokens)`);
  env.sim.reset();
  env.sim.clearCache();
  try {
    switch (arm.key) {
      case 'cut':
        return await replayCut(env, session, limits, arm);
      case 'single-call':
        return await replaySingleCall(env, session, limits, arm);
      case 'parallel':
        return await replayCompactd(env, session, limits, arm, 'summarize');
      case 'native':
        // the append API's auto trigger cannot know the agent's setup, which a provider's compaction needs: the platform asks
        return await replayCompactd(env, session, limits, arm, 'native', 'platform');
      case 'auto':
        return await replayCompactd(env, session, limits, arm, 'auto');
    }
  } catch (error) {
    env.log(`session-cost: ${arm.label} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return notMeasured(arm, `${REPLAY_FAILED}: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500));
  } finally {
    env.sim.configure({ profile: 'instant' });
  }
}

/**
 * The window in the sim's tokens. The sim counts with gpt-tokenizer and the transcripts hold
 * neither Claude Code's system prompt nor its tools, so 200k Claude tokens are converted by
 * the session's own ratio at its real compaction: the sim's count of the context there
 * against Claude Code's `preTokens`. The window thus falls where the real session met it.
 * The quick variant's truncated session ends past its window instead.
 */
export function sessionLimits(counter: SimCounter, session: ReplaySession, truncated: boolean): SessionLimits {
  const windowTokens = truncated
    ? Math.round(counter.request(AGENT_SYSTEM_PROMPT, session.messages) * QUICK_WINDOW_SHARE)
    : Math.round(
        (CLAUDE_WINDOW_TOKENS * counter.request(AGENT_SYSTEM_PROMPT, session.messages.slice(0, session.boundaryIndex))) / session.preTokens,
      );
  return { windowTokens, triggerTokens: Math.round(windowTokens * DEFAULT_POLICY.triggerRatio) };
}

function setupOf(options: SessionCostOptions, sessions: readonly SessionRuns[]): ScenarioResult['setup'] {
  const prices = findModel(AGENT_MODEL)?.prices;
  return {
    sessions: `${sessions.map((s) => `${s.session} (window ${s.windowTokens}, trigger ${s.triggerTokens} tokens)`).join('; ')}${options.maxMessages ? `; quick: the first ${options.maxMessages} messages only` : '; whole sessions, past Claude Code’s own compaction (its summary message left out)'}`,
    agent: `one call per assistant turn (a run of assistant messages) through the official Anthropic SDK, model ${AGENT_MODEL} ($${prices?.input}/M input, $${prices?.cacheRead}/M cache read, $${prices?.cacheWrite}/M cache write, $${prices?.output}/M output), the whole context each time with one cache_control breakpoint on the last message; max_tokens = the real turn's length`,
    window:
      options.maxMessages === undefined
        ? 'Claude’s 200k converted to the sim’s tokens per session: 200k × (the sim’s count of the history at Claude Code’s real compaction / Claude Code’s preTokens there)'
        : `${QUICK_WINDOW_SHARE} of the truncated session’s tokens (the sim’s count), so the replay reaches it`,
    compactd: `the append API as a platform uses it: new messages and the last call's input tokens each turn, GET /context before each call; auto trigger at its default (${DEFAULT_POLICY.triggerRatio} of the window); summarizer ${BENCH_LLM_ENV.COMPACTD_SUMMARIZER}`,
    native:
      'the append API’s trigger cannot know the agent’s provider setup a provider compaction needs, so in arm c the platform asks (strategy native, `agent`: provider, model, system prompt) at the same trigger and cooldown, with compactd’s own trigger off',
    'single call':
      'the agent sends its whole history again plus Claude Code’s own summarization instruction (from the session’s compaction request), max_tokens = the length of Claude Code’s real summary, and continues from one user message: at Claude Code’s real compaction point holding Claude Code’s real summary; elsewhere (past it, or a truncated session) at compactd’s trigger holding the sim’s answer',
    wait: 'wall time the agent blocked at a compaction: compactd’s only when the context it would send was over the window; the single call always',
    'probe score':
      'eval/probes over the session so far, answered by the context the agent sent first after the compaction (the cut: the first cut context)',
    ...(options.policy ? { policy: `compactd's arms ran with ${JSON.stringify(options.policy)} over compactd's defaults` } : {}),
    profile: `llm-sim ${options.realisticProfile} while a compaction runs (its calls and the agent’s turns alike), instant otherwise; prompt cache emulated (5-minute TTL, never reached at this pace)`,
  };
}

function notesOf(sessions: readonly SessionRuns[], options: SessionCostOptions): string[] {
  const notes: string[] = [];
  if (options.maxMessages !== undefined)
    notes.push(
      'Quick variant: the truncated session ends before Claude Code’s real compaction, so the single call continues from the sim’s summary of the whole history (an identifier list the probes barely answer), not from Claude Code’s.',
    );
  const native = sessions.flatMap((s) => s.runs).find((r) => r.arm.key === 'native' && r.status === 'not measured');
  if (native) notes.push(`Arm c (native) ${native.reason ?? 'was not measured'}.`);
  notes.push(
    'The cut arm writes its whole context to the cache on every turn once the window is reached: the oldest message changes, and with it every prefix the cache holds.',
    `The agent's system prompt is ${AGENT_SYSTEM_PROMPT.length} characters (Claude Code's own, ~15k tokens with its tools, is not in the transcripts); tool definitions are not sent. Real turns' thinking is not in the transcripts, so output tokens are the visible answer's.`,
  );
  return notes;
}
