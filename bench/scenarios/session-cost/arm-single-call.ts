import { AGENT_SYSTEM_PROMPT } from './agent.js';
import { armCalls, type ArmRun, type ArmSpec, type ReplayEnv, type SessionLimits } from './arm.js';
import { scoreContext } from './probes.js';
import type { ReplaySession } from './sessions.js';
import { answerTokens, type SimMessage } from './sim-count.js';

/**
 * Arm e: the single-call compaction of Claude Code's kind, done by the agent itself (an
 * emulation of the method, not of any package). The agent sends its whole history once
 * more — the prefix it cached on the previous turn is read, not written — followed by Claude
 * Code's own summarization instruction (verbatim from the session's compaction request),
 * asks for a summary as long as Claude Code's was, blocks until it arrives, and continues
 * from one user message holding it.
 *
 * Where the session really compacted, the agent continues from Claude Code's real summary
 * (the call is still made and paid for as the sim bills it): the sim's summary of a whole
 * long history is an identifier list, no stand-in for a model's. Past that point, or when the
 * replayed part never reaches it, the agent compacts at compactd's trigger and continues
 * from the sim's answer (marked `sim summary`).
 */

/** How Claude Code opens the message a compacted session continues from (the sessions' own summary turns). */
export const CONTINUATION_LEAD =
  'This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.';

export async function replaySingleCall(env: ReplayEnv, session: ReplaySession, limits: SessionLimits, arm: ArmSpec): Promise<ArmRun> {
  const started = performance.now();
  const { counter } = env;
  const system = AGENT_SYSTEM_PROMPT;
  const messages = session.messages;
  const run: ArmRun = { arm, status: 'measured', agentCallIds: new Set(), calls: [], compactions: [], turns: 0, wallMs: 0 };
  // Claude Code's own compaction point, when the replayed messages reach it
  let realPointAhead = session.boundaryIndex < messages.length;
  env.sim.configure({ profile: 'instant' });
  let history: SimMessage[] = [];
  let included = 0;
  for (const [t, turn] of session.turns.entries()) {
    for (; included < turn.start; included += 1) history.push(messages[included] as SimMessage);
    const tokens = counter.request(system, history);
    const atRealPoint = realPointAhead && turn.start >= session.boundaryIndex;
    const due = atRealPoint || (!realPointAhead && tokens >= limits.triggerTokens) || tokens > limits.windowTokens;
    if (due) {
      const instruction: SimMessage = { role: 'user', content: [{ type: 'text', text: session.compactInstruction }] };
      // the call the agent blocks on runs at a model's pace
      env.sim.configure({ profile: env.realisticProfile });
      const answer = await env.agent.call(system, [...history, instruction], session.summaryTokens);
      env.sim.configure({ profile: 'instant' });
      if (answer.text.trim() === '') throw new Error(`single-call compaction at turn ${t}: the summary came back empty`);
      const summary = atRealPoint ? session.summary : `${CONTINUATION_LEAD}\n\n${answer.text}`;
      realPointAhead = realPointAhead && !atRealPoint;
      history = [{ role: 'user', content: [{ type: 'text', text: summary }] }];
      run.compactions.push({
        turn: t,
        kind: 'single-call',
        tokensAtStart: tokens,
        overWindow: tokens > limits.windowTokens,
        waitMs: answer.wallMs,
        durationMs: answer.wallMs,
        status: atRealPoint ? 'completed, Claude Code’s real summary' : 'completed, sim summary',
        tokensAfter: counter.request(system, history),
        probe: scoreContext(messages.slice(0, turn.start), session.cwd, system, history),
      });
    }
    const answer = await env.agent.call(system, history, answerTokens(messages.slice(turn.start, turn.end)));
    run.agentCallIds.add(answer.callId);
    run.turns += 1;
  }
  run.calls = armCalls(env.sim);
  run.wallMs = performance.now() - started;
  return run;
}
