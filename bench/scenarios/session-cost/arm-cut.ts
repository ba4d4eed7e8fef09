import { toolResultText } from '../../../src/compaction/render.js';
import type { Block, NormalizedMessage } from '../../../src/compaction/types.js';
import { AGENT_SYSTEM_PROMPT } from './agent.js';
import { armCalls, type ArmRun, type ArmSpec, type ReplayEnv, type SessionLimits } from './arm.js';
import { scoreContext } from './probes.js';
import type { ReplaySession } from './sessions.js';
import { answerTokens } from './sim-count.js';

/**
 * Arm a: no compaction. The agent sends as much of its history as fits the window, the
 * oldest messages dropped first; the context then starts at a user turn (a tool result whose
 * call was dropped is kept as plain text). Nothing is summarized and the agent never waits;
 * the cost is in the cache: each turn the cut moves, the prompt's start changes and the
 * whole context is written to the cache again.
 */
export async function replayCut(env: ReplayEnv, session: ReplaySession, limits: SessionLimits, arm: ArmSpec): Promise<ArmRun> {
  const started = performance.now();
  const { counter } = env;
  const messages = session.messages;
  const count = (m: NormalizedMessage) => counter.message(m);
  const systemTokens = counter.system(AGENT_SYSTEM_PROMPT);
  const run: ArmRun = { arm, status: 'measured', agentCallIds: new Set(), calls: [], compactions: [], turns: 0, wallMs: 0 };
  env.sim.configure({ profile: 'instant' });
  let cutStart = 0;
  let included = 0;
  // tokens of messages [cutStart, included)
  let sum = 0;
  for (const [t, turn] of session.turns.entries()) {
    for (; included < turn.start; included += 1) sum += count(messages[included] as NormalizedMessage);
    const whole = systemTokens + sum;
    let head: NormalizedMessage;
    let tokens: number;
    for (;;) {
      // a context opens with a user turn
      while (cutStart < turn.start - 1 && messages[cutStart]?.role === 'assistant') {
        sum -= count(messages[cutStart] as NormalizedMessage);
        cutStart += 1;
      }
      const first = messages[cutStart] as NormalizedMessage;
      head = cutStart === 0 ? first : withoutOrphanResults(first);
      tokens = systemTokens + sum - count(first) + count(head);
      if (tokens <= limits.windowTokens || cutStart >= turn.start - 1) break;
      sum -= count(first);
      cutStart += 1;
    }
    const context = [head, ...messages.slice(cutStart + 1, turn.start)];
    if (cutStart > 0 && run.compactions.length === 0) {
      run.compactions.push({
        turn: t,
        kind: 'cut',
        tokensAtStart: whole,
        overWindow: true,
        waitMs: 0,
        durationMs: null,
        status: 'cut',
        tokensAfter: tokens,
        probe: scoreContext(messages.slice(0, turn.start), session.cwd, AGENT_SYSTEM_PROMPT, context),
      });
    }
    const answer = await env.agent.call(AGENT_SYSTEM_PROMPT, context, answerTokens(messages.slice(turn.start, turn.end)));
    run.agentCallIds.add(answer.callId);
    run.turns += 1;
  }
  run.calls = armCalls(env.sim);
  run.wallMs = performance.now() - started;
  return run;
}

/** The first kept message, its tool results turned into text when their calls were cut away. */
function withoutOrphanResults(message: NormalizedMessage): NormalizedMessage {
  if (!message.content.some((b) => b.type === 'tool_result')) return message;
  const content: Block[] = message.content.map((block) =>
    block.type === 'tool_result' ? { type: 'text', text: `[result of an earlier tool call]\n${toolResultText(block)}` } : block,
  );
  return { ...message, content };
}
