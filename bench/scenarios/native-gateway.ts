import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import {
  AGENT_SYSTEM,
  type AgentTurn,
  ANTHROPIC_AGENT_TOOLS,
  buildLogStep,
  RESPONSES_AGENT_TOOLS,
  withLastBlockBreakpoint,
} from '../../harness/gateway-agent.js';
import type { CallRecord } from '../../src/llm-sim/state.js';
import type { SimCompactionKind } from '../../src/llm-sim/types.js';
import type { BenchContext } from '../lib/context.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { round } from '../lib/stats.js';

/**
 * Scenario 11: strategy `auto` through the gateway on both providers (SPEC §5.10), as an
 * agent runs it. An agent with a system prompt and tools talks to `/gateway/anthropic`
 * (Messages) or `/gateway/openai/v1/responses` until its history passes the trigger; the
 * gateway's compaction asks the provider's own (Anthropic's on-demand compaction, OpenAI's
 * `/responses/compact`) with the agent's prefix. Read from llm-sim's log: the share of that
 * call's input read from the cache the agent's requests wrote; whether the agent's next
 * request opens with the provider's item and the sim's validation accepts it; and whether
 * reverting the compaction gives every original back.
 */

export const NATIVE_GATEWAY_TITLE = '11. Provider compaction through the gateway: the agent’s cache, its next request, revert';

/** Small enough that a few turns pass the trigger (0.7), large enough that the history fits one provider call. */
const CONTEXT_LIMIT = 12_000;
const POLICY = { keepRecent: 2, minMessages: 6, cooldownMessages: 2 };
const MAX_TURNS = 40;

interface ProviderRun {
  provider: 'anthropic' | 'openai';
  model: string;
  turns: number;
  call: CallRecord | null;
  job: { id: string; strategy: string; reason: string } | null;
  nextOpensWithItem: boolean;
  nextAccepted: boolean;
  revertRestored: boolean;
  error: string | null;
}

interface Agent {
  /** one agent turn: a new user step, the model's answer kept in the history */
  turn(i: number): Promise<void>;
  /** whether the request llm-sim received last opens with (or holds) the provider's item */
  sentItem(call: CallRecord): boolean;
}

export async function runNativeGateway(ctx: BenchContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const result = emptyScenario('native-gateway', NATIVE_GATEWAY_TITLE);
  ctx.svc.sim.configure({ profile: 'instant', summarizeWindow: null });
  await ctx.svc.startWorker();
  result.setup = {
    agent: `system prompt ${AGENT_SYSTEM.length} characters and one tool, every turn a ~600-token build log; Anthropic through the official SDK with a cache breakpoint on the last block (as Claude Code sends it), OpenAI through the Responses API`,
    conversation: `contextLimit ${CONTEXT_LIMIT}, policy ${JSON.stringify(POLICY)} (defaults otherwise: strategy auto, trigger 0.7)`,
    profile: 'llm-sim instant, prompt cache emulated (prefix hashes, ≥ 1,024 tokens)',
  };
  const runs = [await runProvider(ctx, 'anthropic', 'claude-sonnet-4-5'), await runProvider(ctx, 'openai', 'gpt-4o-mini')];
  const anthropic = runs[0] as ProviderRun;
  const share = cacheShare(anthropic.call);
  result.figures.push(figure('Anthropic: share of the provider compaction’s input read from the agent’s cache', '×', [share]));
  const whole = runs.every((r) => r.job?.strategy === 'native' && r.nextOpensWithItem && r.nextAccepted && r.revertRestored);
  result.targets.push(
    target('through the gateway, the provider compaction’s input read from the agent’s cache (share, Anthropic)', '>=', 0.9, share, '×'),
    target(
      'native on both providers: completed, the next request opens with the item and is accepted, revert restores every original (1 = all)',
      '>=',
      1,
      whole ? 1 : 0,
    ),
  );
  // a missed target names what the run saw: the provider's error or the part that did not hold
  const seen = runs.map((r) => `${r.provider}: ${r.error ?? describe(r)}`).join('; ');
  for (const t of result.targets) if (!t.met) t.bottleneck = seen;
  result.tables.push({
    title: 'Per provider',
    columns: [
      'provider',
      'agent model',
      'turns until the compaction',
      'compaction call: input (uncached) / cache read / cache write',
      'cache-read share',
      'job',
      'next request opens with the item',
      'next request accepted',
      'revert restored the originals',
    ],
    rows: runs.map((r) => [
      r.provider,
      r.model,
      r.turns,
      r.call ? `${r.call.usage.input} / ${r.call.usage.cacheRead} / ${r.call.usage.cacheWrite}` : '—',
      r.call ? round(cacheShare(r.call), 3) : '—',
      r.error ?? (r.job ? `${r.job.strategy}: ${r.job.reason}` : 'no compaction'),
      r.nextOpensWithItem ? 'yes' : 'no',
      r.nextAccepted ? 'yes' : 'no',
      r.revertRestored ? 'yes' : 'no',
    ]),
  });
  result.notes.push(
    'The cache target is Anthropic’s, whose compaction request carries the agent’s own breakpoint; OpenAI caches a prefix without one and bills no cache write, and its share is shown beside it.',
  );
  result.durationMs = performance.now() - started;
  return [result];
}

function describe(run: ProviderRun): string {
  return [
    run.job ? `job ${run.job.strategy}` : 'no native job',
    `cache-read share ${round(cacheShare(run.call), 3)}`,
    `next request ${run.nextOpensWithItem ? 'opens with the item' : 'lacks the item'}, ${run.nextAccepted ? 'accepted' : 'refused'}`,
    `revert ${run.revertRestored ? 'restored the originals' : 'did not restore the originals'}`,
  ].join(', ');
}

function cacheShare(call: CallRecord | null): number {
  if (!call) return 0;
  const { input, cacheRead, cacheWrite } = call.usage;
  const total = input + cacheRead + cacheWrite;
  return total === 0 ? 0 : cacheRead / total;
}

async function runProvider(ctx: BenchContext, provider: ProviderRun['provider'], model: string): Promise<ProviderRun> {
  const id = ctx.uniqueId(`native-${provider}`);
  const run: ProviderRun = {
    provider,
    model,
    turns: 0,
    call: null,
    job: null,
    nextOpensWithItem: false,
    nextAccepted: false,
    revertRestored: false,
    error: null,
  };
  try {
    await ctx.svc.api.createConversation(id, { model, contextLimit: CONTEXT_LIMIT, policy: POLICY });
    const agent = provider === 'anthropic' ? anthropicAgent(ctx, id, model) : openaiAgent(ctx, id, model);
    const kind: SimCompactionKind = provider === 'anthropic' ? 'summarize' : 'responses_compact';
    const since = lastCallId(ctx);
    for (let i = 0; i < MAX_TURNS && run.call === null; i += 1) {
      await agent.turn(i);
      run.turns = i + 1;
      await settleJobs(ctx, id);
      run.call = ctx.svc.sim.callLog().find((call) => call.id > since && call.compaction === kind) ?? null;
    }
    if (run.call === null) throw new Error(`no provider compaction after ${MAX_TURNS} turns; jobs: ${await jobOutcomes(ctx, id)}`);
    const native = (await jobsOf(ctx, id)).find((job) => job.result?.strategy === 'native');
    if (native) run.job = { id: native.id, strategy: 'native', reason: native.result?.decision?.reason ?? '' };

    const before = lastCallId(ctx);
    await agent.turn(100);
    const next = ctx.svc.sim.callLog().findLast((call) => call.id > before && call.compaction === null);
    run.nextAccepted = next?.outcome === 'ok' && next.status === 200;
    run.nextOpensWithItem = next ? agent.sentItem(next) : false;
    await settleJobs(ctx, id);

    if (run.job) run.revertRestored = await revertRestores(ctx, id, run.job.id);
  } catch (error) {
    run.error = error instanceof Error ? error.message.slice(0, 300) : String(error);
    ctx.log(`native-gateway: ${provider}: ${run.error}`);
  }
  return run;
}

function lastCallId(ctx: BenchContext): number {
  return ctx.svc.sim.callLog().at(-1)?.id ?? 0;
}

interface JobSummary {
  id: string;
  status: string;
  result?: { strategy?: string; decision?: { reason?: string } };
}

/** The conversation's jobs, newest first. */
async function jobsOf(ctx: BenchContext, id: string): Promise<JobSummary[]> {
  const { body } = await ctx.svc.api.request<{ jobs: JobSummary[] }>('GET', `/v1/conversations/${encodeURIComponent(id)}/jobs`);
  return body.jobs;
}

/** Waits for every job of the conversation (the gateway's compactions run in the background). */
async function settleJobs(ctx: BenchContext, id: string): Promise<void> {
  for (const job of await jobsOf(ctx, id)) await ctx.svc.api.waitForJob(job.id, 120_000);
}

/** What each job of the conversation ended as, for a run that saw no provider compaction. */
async function jobOutcomes(ctx: BenchContext, id: string): Promise<string> {
  const jobs = await jobsOf(ctx, id);
  if (jobs.length === 0) return 'none';
  return jobs.map((job) => `${job.status} ${job.result?.strategy ?? ''} ${job.result?.decision?.reason ?? ''}`.trim()).join('; ');
}

/** Reverts the compaction; every message appended is active again and no clip-archive is. */
async function revertRestores(ctx: BenchContext, id: string, jobId: string): Promise<boolean> {
  await ctx.svc.api.request('POST', `/v1/jobs/${jobId}/revert`, undefined, [200]);
  const history = await ctx.svc.api.exportHistory(id);
  const originals = history.filter((m) => m.kind !== 'clip_archive');
  return originals.length > 0 && originals.every((m) => !m.archived) && !history.some((m) => m.kind === 'clip_archive' && !m.archived);
}

/** No upstream key of the agent's own: the requests use compactd's provider key, the one a provider's compaction runs on. */
const gatewayHeaders = (id: string) => ({ 'x-compactd-conversation': id });

function anthropicAgent(ctx: BenchContext, id: string, model: string): Agent {
  const client = new Anthropic({
    apiKey: ctx.svc.api.key,
    baseURL: `${ctx.svc.api.baseUrl}/gateway/anthropic`,
    maxRetries: 0,
    defaultHeaders: gatewayHeaders(id),
  });
  const history: AgentTurn[] = [];
  return {
    async turn(i) {
      history.push({ role: 'user', content: [{ type: 'text', text: buildLogStep(i) }] });
      const answer = await client.messages.create({
        model,
        max_tokens: 200,
        system: AGENT_SYSTEM,
        tools: ANTHROPIC_AGENT_TOOLS,
        messages: withLastBlockBreakpoint(history) as unknown as Anthropic.Messages.MessageParam[],
      });
      history.push({ role: 'assistant', content: answer.content.map((b) => ({ ...b })) as Array<Record<string, unknown>> });
    },
    sentItem(call) {
      const body = call.body as { messages?: AgentTurn[] } | undefined;
      return body?.messages?.[0]?.content[0]?.['type'] === 'compaction' && (call.headers?.['anthropic-beta'] ?? '').includes('compact-');
    },
  };
}

function openaiAgent(ctx: BenchContext, id: string, model: string): Agent {
  const client = new OpenAI({
    apiKey: ctx.svc.api.key,
    baseURL: `${ctx.svc.api.baseUrl}/gateway/openai/v1`,
    maxRetries: 0,
    defaultHeaders: gatewayHeaders(id),
  });
  const input: OpenAI.Responses.ResponseInputItem[] = [];
  return {
    async turn(i) {
      input.push({ role: 'user', content: buildLogStep(i) });
      const answer = await client.responses.create({ model, instructions: AGENT_SYSTEM, tools: RESPONSES_AGENT_TOOLS, input });
      input.push({ role: 'assistant', content: answer.output_text });
    },
    sentItem(call) {
      const sent = (call.body as { input?: Array<Record<string, unknown>> } | undefined)?.input ?? [];
      const items = sent.filter((item) => item['type'] === 'compaction');
      return items.length === 1 && typeof items[0]?.['encrypted_content'] === 'string';
    },
  };
}
