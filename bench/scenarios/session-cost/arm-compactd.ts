import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { DEFAULT_POLICY } from '../../../src/config/policy.js';
import type { JobView } from '../../lib/api-client.js';
import { readJob } from '../../lib/job-timing.js';
import { AGENT_MODEL, AGENT_SYSTEM_PROMPT } from './agent.js';
import { armCalls, type ArmRun, type ArmSpec, type CompactionEvent, notMeasured, type ReplayEnv, type SessionLimits } from './arm.js';
import { scoreContext } from './probes.js';
import type { ReplaySession } from './sessions.js';
import { answerTokens, type SimMessage } from './sim-count.js';

/**
 * Arms b, c and d: the agent keeps its session in compactd, as a platform does. Each turn it
 * appends the new messages (with the provider's input count of its last call), reads the
 * context and sends it. compactd's auto trigger runs at its default (policy triggerRatio of
 * the window) and the job runs in the background while the agent goes on; the agent blocks
 * only when the context it would send is over the window: then it waits for the running job,
 * or asks for a compaction and waits for that one.
 */

interface AppendAnswer {
  activeTokens: number;
  compaction: { id: string; status: string } | null;
}

interface ContextAnswer {
  system?: string;
  messages: SimMessage[];
}

interface Tracked {
  id: string;
  event: CompactionEvent;
  done: boolean;
  scored: boolean;
}

const TERMINAL = new Set(['completed', 'noop', 'failed', 'cancelled']);

/** What a provider's compaction needs to compact as the agent sends (the append API cannot know it otherwise). */
const AGENT_SETUP = { provider: 'anthropic', model: AGENT_MODEL, system: AGENT_SYSTEM_PROMPT } as const;
/** compactd's cooldown (policy cooldownMessages) in agent turns: a turn adds about two messages */
const COOLDOWN_TURNS = Math.ceil(DEFAULT_POLICY.cooldownMessages / 2);

export async function replayCompactd(
  env: ReplayEnv,
  session: ReplaySession,
  limits: SessionLimits,
  arm: ArmSpec,
  strategy: string,
  trigger: 'compactd' | 'platform' = 'compactd',
): Promise<ArmRun> {
  const started = performance.now();
  const id = env.uniqueId(`cost-${arm.key}`);
  const path = `/v1/conversations/${encodeURIComponent(id)}`;
  const created = await env.api.request<Record<string, unknown>>(
    'POST',
    '/v1/conversations',
    {
      id,
      model: AGENT_MODEL,
      contextLimit: limits.windowTokens,
      policy: { ...env.policy, strategy, ...(trigger === 'platform' ? { auto: false } : {}) },
    },
    [201, 400],
    true,
  );
  // a strategy this build does not offer, or a --policy it refuses, is a 400 naming the field
  if (created.status === 400) {
    const refused = `the API answered 400 (${String(created.body['code'] ?? '')}: ${String(created.body['detail'] ?? created.body['title'] ?? '')})`;
    const policyRefused = Object.keys(env.policy).length > 0 && !/\bstrategy\b/.test(JSON.stringify(created.body['errors'] ?? ''));
    return notMeasured(
      arm,
      policyRefused ? `--policy ${JSON.stringify(env.policy)} refused: ${refused}` : `strategy ${strategy} not available: ${refused}`,
    );
  }

  const run: ArmRun = { arm, status: 'measured', agentCallIds: new Set(), calls: [], compactions: [], turns: 0, wallMs: 0 };
  const tracked: Tracked[] = [];
  const followUps = new Set<string>();
  const messages = session.messages;
  const track = (jobId: string, kind: CompactionEvent['kind'], turn: number): Tracked => {
    const entry: Tracked = {
      id: jobId,
      done: false,
      scored: false,
      event: {
        turn,
        kind,
        tokensAtStart: 0,
        overWindow: false,
        waitMs: 0,
        durationMs: null,
        status: 'queued',
        tokensAfter: null,
        probe: null,
        jobId,
      },
    };
    tracked.push(entry);
    run.compactions.push(entry.event);
    return entry;
  };
  const active = () => tracked.some((j) => !j.done) || followUps.size > 0;
  const refresh = async () => {
    for (const job of tracked.filter((j) => !j.done)) {
      const view = (await env.api.request<JobView>('GET', `/v1/jobs/${job.id}`)).body;
      if (TERMINAL.has(view.status)) await finish(job, view);
    }
    for (const followUp of [...followUps]) {
      const view = (await env.api.request<JobView>('GET', `/v1/jobs/${followUp}`)).body;
      if (TERMINAL.has(view.status)) followUps.delete(followUp);
    }
  };
  const finish = async (job: Tracked, view: JobView) => {
    job.done = true;
    job.event.status = view.status;
    const row = await readJob(env.sql, job.id);
    job.event.durationMs = row.finishedMs === null ? null : row.finishedMs - row.createdMs;
    const result = view.result ?? {};
    // the strategy the job ran, and the rule's reason when it chose (strategies native and auto)
    const decision = result['decision'] as { reason?: unknown } | undefined;
    const reason = typeof decision?.reason === 'string' ? `: ${decision.reason}` : '';
    if (typeof result['strategy'] === 'string') job.event.decided = `${result['strategy']}${reason}`;
    const followUp = result['consolidationJobId'];
    if (typeof followUp === 'string') followUps.add(followUp);
  };
  // with the agent's model named, a provider's compaction block opens the context it made
  const readContext = async () =>
    (await env.api.request<ContextAnswer>('GET', `${path}/context?format=anthropic&model=${AGENT_MODEL}`)).body;
  let askedAt = -Infinity;
  const ask = async (turn: number, kind: 'asked' | 'manual'): Promise<Tracked> => {
    const body = { strategy, agent: AGENT_SETUP, ...(kind === 'manual' ? { agentWaiting: true } : {}) };
    const asked = (await env.api.request<JobView>('POST', `${path}/compactions`, body, [200, 202], true)).body;
    askedAt = turn;
    return track(asked.id, kind, turn);
  };
  const countContext = (context: ContextAnswer) => env.counter.request(context.system ?? '', context.messages, true);

  env.sim.configure({ profile: 'instant' });
  let appended = 0;
  let lastInput: number | null = null;
  for (const [t, turn] of session.turns.entries()) {
    const fresh: unknown[] = messages.slice(appended, turn.start);
    if (appended === 0) fresh.unshift({ role: 'system', content: [{ type: 'text', text: AGENT_SYSTEM_PROMPT }] });
    appended = turn.start;
    const usage = lastInput === null ? {} : { usage: { inputTokens: lastInput } };
    const append = await env.api.request<AppendAnswer>('POST', `${path}/messages`, { messages: fresh, ...usage }, [201]);
    const triggered = append.body.compaction ? track(append.body.compaction.id, 'auto', t) : null;
    // from here until it commits, the compaction's calls and the agent's turns run at a model's pace
    if (triggered) env.sim.configure({ profile: env.realisticProfile });
    await refresh();
    let context = await readContext();
    let tokens = countContext(context);
    if (triggered) {
      triggered.event.tokensAtStart = tokens;
      triggered.event.overWindow = tokens > limits.windowTokens;
    }
    // a platform that asks itself does so at compactd's trigger, after compactd's cooldown (in turns here)
    if (
      trigger === 'platform' &&
      !active() &&
      tokens >= limits.triggerTokens &&
      tokens <= limits.windowTokens &&
      t - askedAt >= COOLDOWN_TURNS
    ) {
      const asked = await ask(t, 'asked');
      asked.event.tokensAtStart = tokens;
      env.sim.configure({ profile: env.realisticProfile });
    }
    if (tokens > limits.windowTokens) {
      // the agent cannot send this: it waits for the running compaction, or asks for one
      let blocking = tracked.find((j) => !j.done);
      if (!blocking) {
        blocking = await ask(t, 'manual');
        blocking.event.tokensAtStart = tokens;
      }
      blocking.event.overWindow = true;
      env.sim.configure({ profile: env.realisticProfile });
      const waitStarted = performance.now();
      await env.api.waitForJob(blocking.id);
      blocking.event.waitMs += performance.now() - waitStarted;
      await refresh();
      context = await readContext();
      tokens = countContext(context);
      if (tokens > limits.windowTokens)
        throw new Error(
          `turn ${t}: the context is over the window after compaction ${blocking.id} ended ${blocking.event.status} (${tokens} > ${limits.windowTokens} tokens)`,
        );
    }
    for (const job of tracked.filter((j) => j.done && !j.scored)) {
      job.scored = true;
      if (job.event.status !== 'completed') continue;
      job.event.tokensAfter = tokens;
      job.event.probe = scoreContext(
        messages.slice(0, turn.start) as NormalizedMessage[],
        session.cwd,
        context.system ?? '',
        context.messages,
      );
    }
    env.sim.configure({ profile: active() ? env.realisticProfile : 'instant' });
    const answer = await env.agent.call(context.system ?? '', context.messages, answerTokens(messages.slice(turn.start, turn.end)));
    run.agentCallIds.add(answer.callId);
    lastInput = answer.inputTokens;
    run.turns += 1;
  }
  // the session is over: what is still running is paid for, not waited on by the agent
  for (const job of tracked.filter((j) => !j.done)) await finish(job, await env.api.waitForJob(job.id));
  for (const followUp of followUps) await env.api.waitForJob(followUp);
  env.sim.configure({ profile: 'instant' });
  run.calls = armCalls(env.sim);
  run.wallMs = performance.now() - started;
  return run;
}
