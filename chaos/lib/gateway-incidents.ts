import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import type { LlmSim } from '../../src/llm-sim/server.js';

/**
 * What real clients do to a history through the gateway, with the official SDKs (retries off):
 * an edited earlier turn, a retry of an answered request, a NUL and a lone surrogate in a tool
 * output, `''` re-sent for a `null` content, a side request under the main loop's end-user id.
 * After each incident the session goes on, one turn at a time, until a compaction of its
 * conversation has completed; the figure is the next upstream request's input tokens over the
 * largest before it (llm-sim's count of what the gateway sent). A conversation the incident
 * switched off would grow without a compaction until the turns run out.
 */

export interface IncidentOutcome {
  name: string;
  /** x-compactd-gateway of the request that carried the incident */
  incidentMode: string;
  /** the conversation the session's requests were stored under */
  conversation: string;
  turns: number;
  compacted: boolean;
  largestBefore: number;
  after: number;
  error?: string;
}

export interface IncidentContext {
  baseUrl: string;
  key: string;
  sim: LlmSim;
  /** turns driven after the incident before giving up */
  maxTurns: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ACTIVE = ['queued', 'planning', 'summarizing', 'resummarizing', 'committing'];

/** A window the session passes after a few turns, compacted down to a fifth of it (the gateway-heal integration test's settings). */
export const INCIDENT_CONVERSATION = {
  model: 'claude-haiku-4-5',
  contextLimit: 6_000,
  policy: { triggerRatio: 0.6, warnRatio: 0.5, targetRatio: 0.2, keepRecent: 2, minMessages: 6, cooldownMessages: 2 },
};

/** A turn of an agent fixing a build: a tool log of about 600 tokens. */
export const buildStep = (i: number) =>
  `Step ${i}: the build log of src/module${i}.ts. ${'error TS2345 at src/module.ts:12, expected string got number. '.repeat(40)}`;

function rest(ctx: IncidentContext) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${ctx.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ctx.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
  return {
    create: (id: string) => call('POST', '/v1/conversations', { id, ...INCIDENT_CONVERSATION }),
    jobs: async (id: string) => (await call<{ jobs: Array<{ id: string; status: string }> }>('GET', `/v1/conversations/${id}/jobs`)).jobs,
    job: (jobId: string) => call<{ status: string }>('GET', `/v1/jobs/${jobId}?wait=20`),
    lastRole: async (id: string): Promise<string | null> => {
      let after: number | null = 0;
      let last: string | null = null;
      while (after !== null) {
        const page: { messages: Array<{ role: string }>; nextAfter: number | null } = await call(
          'GET',
          `/v1/conversations/${id}/messages?after=${after}&limit=1000`,
        );
        last = page.messages.at(-1)?.role ?? last;
        after = page.nextAfter;
      }
      return last;
    },
  };
}

/** Until the answer is stored (the gateway stores it after relaying it) and the conversation's compactions in flight have ended. */
async function settle(ctx: IncidentContext, id: string): Promise<void> {
  const api = rest(ctx);
  const deadline = Date.now() + 60_000;
  while ((await api.lastRole(id)) !== 'assistant' && Date.now() < deadline) await pause(50);
  for (const job of await api.jobs(id)) {
    let status = job.status;
    while (ACTIVE.includes(status) && Date.now() < deadline) status = (await api.job(job.id)).status;
  }
}

const completedJobs = async (ctx: IncidentContext, id: string) =>
  (await rest(ctx).jobs(id)).filter((job) => job.status === 'completed').length;

/** The sim's calls since `fromId` (exclusive), oldest first. */
const callsSince = (sim: LlmSim, fromId: number) => sim.callLog().filter((call) => call.id > fromId);
const lastCallId = (sim: LlmSim) => sim.callLog().at(-1)?.id ?? 0;

/**
 * Turns of the session (`turn(i)` sends one request and keeps its answer in the history)
 * until a compaction of `id` has completed; then `final()` sends one more request, and the
 * figures are its input tokens and the largest of the session's requests before it.
 */
async function untilCompacted(
  ctx: IncidentContext,
  id: string,
  fromCallId: number,
  turn: (i: number) => Promise<void>,
  final: () => Promise<void>,
): Promise<Pick<IncidentOutcome, 'turns' | 'compacted' | 'largestBefore' | 'after'>> {
  const since = await completedJobs(ctx, id);
  for (let i = 0; i < ctx.maxTurns; i += 1) {
    await turn(i);
    await settle(ctx, id);
    if ((await completedJobs(ctx, id)) > since) {
      const before = callsSince(ctx.sim, fromCallId).map((call) => call.inputTokens);
      await final();
      const after = callsSince(ctx.sim, fromCallId).at(-1)?.inputTokens ?? Number.NaN;
      return { turns: i + 1, compacted: true, largestBefore: Math.max(...before), after };
    }
  }
  const before = callsSince(ctx.sim, fromCallId).map((call) => call.inputTokens);
  return { turns: ctx.maxTurns, compacted: false, largestBefore: Math.max(...before), after: Number.NaN };
}

const textBlocks = (content: Anthropic.ContentBlock[]): Anthropic.TextBlockParam[] =>
  content.map((block) => ({ type: 'text', text: block.type === 'text' ? block.text : '' }));
const MODEL = 'claude-haiku-4-5';

function anthropicSession(ctx: IncidentContext, id: string) {
  const client = new Anthropic({ apiKey: ctx.key, baseURL: `${ctx.baseUrl}/gateway/anthropic`, maxRetries: 0, timeout: 150_000 });
  const history: Anthropic.MessageParam[] = [];
  const send = (messages: Anthropic.MessageParam[], extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
    client.messages
      .create({ model: MODEL, max_tokens: 60, messages, ...extra }, { headers: { 'x-compactd-conversation': id } })
      .withResponse();
  return {
    client,
    history,
    send,
    /** one user turn and its answer, kept */
    turn: async (i: number) => {
      history.push({ role: 'user', content: buildStep(i) });
      const answer = await send(history);
      history.push({ role: 'assistant', content: textBlocks(answer.data.content) });
    },
    final: async () => {
      history.push({ role: 'user', content: 'What is left?' });
      await send(history);
    },
  };
}

async function editedTurn(ctx: IncidentContext, id: string, fromCallId: number): Promise<IncidentOutcome> {
  await rest(ctx).create(id);
  const session = anthropicSession(ctx, id);
  for (let i = 0; i < 2; i += 1) {
    await session.turn(i);
    await settle(ctx, id);
  }
  // the user edits their second message and the agent sends the history from there
  session.history[2] = { role: 'user', content: `Edited: ${buildStep(1)}` };
  const edited = await session.send(session.history.slice(0, 3));
  session.history.splice(3, session.history.length, { role: 'assistant', content: textBlocks(edited.data.content) });
  const driven = await untilCompacted(ctx, id, fromCallId, (i) => session.turn(i + 2), session.final);
  return {
    name: 'edited earlier turn',
    incidentMode: edited.response.headers.get('x-compactd-gateway') ?? 'none',
    conversation: id,
    ...driven,
  };
}

async function retriedRequest(ctx: IncidentContext, id: string, fromCallId: number): Promise<IncidentOutcome> {
  await rest(ctx).create(id);
  const session = anthropicSession(ctx, id);
  session.history.push({ role: 'user', content: buildStep(0) });
  await session.send(session.history);
  await settle(ctx, id);
  // the client never got that answer (a timeout) and sends the same request again
  const retried = await session.send(session.history);
  session.history.push({ role: 'assistant', content: textBlocks(retried.data.content) });
  const driven = await untilCompacted(ctx, id, fromCallId, (i) => session.turn(i + 1), session.final);
  return {
    name: 'retry of an answered request',
    incidentMode: retried.response.headers.get('x-compactd-gateway') ?? 'none',
    conversation: id,
    ...driven,
  };
}

async function nulInToolOutput(ctx: IncidentContext, id: string, fromCallId: number): Promise<IncidentOutcome> {
  await rest(ctx).create(id);
  const session = anthropicSession(ctx, id);
  const tools: Anthropic.Tool[] = [
    { name: 'Bash', description: 'Runs a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
  ];
  session.history.push(
    { role: 'user', content: buildStep(0) },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_cat', name: 'Bash', input: { command: 'cat build/app.bin' } }] },
    // `cat` of a binary file: a NUL and a lone surrogate in the output
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_cat', content: 'ELF\u0000\u0001\u0002 header \ud800 garbage' }] },
  );
  const sent = await session.send(session.history, { tools });
  session.history.push({ role: 'assistant', content: textBlocks(sent.data.content) });
  const turn = async (i: number) => {
    session.history.push({ role: 'user', content: buildStep(i + 1) });
    const answer = await session.send(session.history, { tools });
    session.history.push({ role: 'assistant', content: textBlocks(answer.data.content) });
  };
  const final = async () => {
    session.history.push({ role: 'user', content: 'What is left?' });
    await session.send(session.history, { tools });
  };
  const driven = await untilCompacted(ctx, id, fromCallId, turn, final);
  return {
    name: 'NUL in a tool output',
    incidentMode: sent.response.headers.get('x-compactd-gateway') ?? 'none',
    conversation: id,
    ...driven,
  };
}

async function emptyForNull(ctx: IncidentContext, id: string, fromCallId: number): Promise<IncidentOutcome> {
  await rest(ctx).create(id);
  const client = new OpenAI({ apiKey: ctx.key, baseURL: `${ctx.baseUrl}/gateway/openai/v1`, maxRetries: 0, timeout: 150_000 });
  // the OpenAI end-user field names the conversation (a valid id is used as it is)
  const send = (messages: OpenAI.ChatCompletionMessageParam[]) =>
    client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 60, messages, user: id }).withResponse();
  const history: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'user', content: buildStep(0) },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'ok 12 tests' },
  ];
  const first = await send(history);
  history.push({ role: 'assistant', content: first.data.choices[0]?.message.content ?? '' });
  // the client re-sends the tool-call-only answer with '' where it got null
  history[1] = { ...(history[1] as OpenAI.ChatCompletionAssistantMessageParam), content: '' };
  history.push({ role: 'user', content: buildStep(1) });
  const resent = await send(history);
  history.push({ role: 'assistant', content: resent.data.choices[0]?.message.content ?? '' });
  const turn = async (i: number) => {
    history.push({ role: 'user', content: buildStep(i + 2) });
    const answer = await send(history);
    history.push({ role: 'assistant', content: answer.data.choices[0]?.message.content ?? '' });
  };
  const final = async () => {
    history.push({ role: 'user', content: 'What is left?' });
    await send(history);
  };
  const driven = await untilCompacted(ctx, id, fromCallId, turn, final);
  return {
    name: "'' for null (OpenAI)",
    incidentMode: resent.response.headers.get('x-compactd-gateway') ?? 'none',
    conversation: id,
    ...driven,
  };
}

async function sideRequest(ctx: IncidentContext, user: string, fromCallId: number): Promise<IncidentOutcome> {
  // the session's settings: the first history under the id (the side request) creates it with these
  await rest(ctx).create(user);
  const client = new Anthropic({ apiKey: ctx.key, baseURL: `${ctx.baseUrl}/gateway/anthropic`, maxRetries: 0, timeout: 150_000 });
  // Claude Code run interactively: a title request with the main loop's end-user id before each turn
  const title = (text: string) =>
    client.messages
      .create({
        model: MODEL,
        max_tokens: 20,
        system: 'Write a 5-word title for this conversation.',
        metadata: { user_id: user },
        messages: [{ role: 'user', content: text }],
      })
      .withResponse();
  const main = (messages: Anthropic.MessageParam[]) =>
    client.messages
      .create({ model: MODEL, max_tokens: 60, system: 'You are the main agent.', metadata: { user_id: user }, messages })
      .withResponse();
  const history: Anthropic.MessageParam[] = [];
  const firstTitle = await title('Fix the build of src/module.ts');
  let mainId = '';
  let mode = 'none';
  const turn = async (i: number) => {
    await title(`Turn ${i}: fix the build`);
    history.push({ role: 'user', content: buildStep(i) });
    const answer = await main(history);
    mainId = answer.response.headers.get('x-compactd-conversation') ?? mainId;
    if (i === 0) mode = answer.response.headers.get('x-compactd-gateway') ?? 'none';
    history.push({ role: 'assistant', content: textBlocks(answer.data.content) });
    await settle(ctx, mainId);
  };
  const final = async () => {
    history.push({ role: 'user', content: 'What is left?' });
    await main(history);
  };
  // the main loop's own conversation (a thread of the id) is known after its first turn
  await turn(0);
  const since = await completedJobs(ctx, mainId);
  let driven: Pick<IncidentOutcome, 'turns' | 'compacted' | 'largestBefore' | 'after'>;
  if (since > 0) {
    const before = callsSince(ctx.sim, fromCallId).map((call) => call.inputTokens);
    await final();
    driven = {
      turns: 1,
      compacted: true,
      largestBefore: Math.max(...before),
      after: callsSince(ctx.sim, fromCallId).at(-1)?.inputTokens ?? Number.NaN,
    };
  } else {
    driven = await untilCompacted(ctx, mainId, fromCallId, (i) => turn(i + 1), final);
    driven.turns += 1;
  }
  const titleConversation = firstTitle.response.headers.get('x-compactd-conversation') ?? 'none';
  return {
    name: 'side request with the same end-user id',
    incidentMode: mode,
    conversation: `${mainId} (side requests: ${titleConversation})`,
    ...driven,
  };
}

export const INCIDENTS: ReadonlyArray<{
  id: string;
  run: (ctx: IncidentContext, id: string, fromCallId: number) => Promise<IncidentOutcome>;
}> = [
  { id: 'inc-edit', run: editedTurn },
  { id: 'inc-retry', run: retriedRequest },
  { id: 'inc-nul', run: nulInToolOutput },
  { id: 'inc-empty', run: emptyForNull },
  { id: 'inc-side', run: sideRequest },
];

/** Every incident in turn (each on its own conversation); one that throws is an outcome with its error. */
export async function runIncidents(ctx: IncidentContext): Promise<IncidentOutcome[]> {
  const out: IncidentOutcome[] = [];
  for (const incident of INCIDENTS) {
    const fromCallId = lastCallId(ctx.sim);
    try {
      out.push(await incident.run(ctx, incident.id, fromCallId));
    } catch (error) {
      out.push({
        name: incident.id,
        incidentMode: 'none',
        conversation: incident.id,
        turns: 0,
        compacted: false,
        largestBefore: Number.NaN,
        after: Number.NaN,
        error: (error as Error).message.slice(0, 300),
      });
    }
  }
  return out;
}
