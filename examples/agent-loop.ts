/**
 * A minimal agent loop that keeps its conversation in compactd.
 *
 *   - every turn (user, assistant, tool results) is appended to compactd, with the usage the
 *     provider reported, so compactd's auto-trigger sees the real context size;
 *   - before each model call the loop asks compactd for the ready-to-send context (system
 *     merged, clip-archive included once compaction ran, tool pairs intact);
 *   - the model gets compactd's own `compact` tool (GET /v1/tools/compact); calling it
 *     enqueues a compaction with `trigger: "tool"` and returns at once; a user's `/compact`
 *     does the same and waits for the job.
 *
 * Run it against a compactd and any Anthropic-compatible endpoint (llm-sim works):
 *
 *   COMPACTD_URL=http://127.0.0.1:8080 COMPACTD_API_KEY=… \
 *   ANTHROPIC_BASE_URL=http://127.0.0.1:8090 ANTHROPIC_API_KEY=… \
 *   npx tsx examples/agent-loop.ts "Find the flaky test" "Fix it" "/compact the fix plan"
 *
 * Optional: AGENT_CONVERSATION (id; default a new one), AGENT_MODEL, AGENT_POLICY (JSON
 * compaction policy of a new conversation, e.g. {"keepRecent": 4}).
 */
import { pathToFileURL } from 'node:url';

import Anthropic from '@anthropic-ai/sdk';
import { type Block, type CompactdClient, createClient, type InputMessage, isCompactdError } from 'compactd/client';

export interface LocalTool {
  definition: Anthropic.Tool;
  run(input: unknown): Promise<string>;
}

export interface AgentOptions {
  compactd: CompactdClient;
  anthropic: Anthropic;
  conversationId: string;
  model: string;
  maxTokens?: number;
  /** model calls per user turn before the loop gives up on a tool-calling spiral */
  maxSteps?: number;
  /** the agent's own tools, besides `compact` */
  tools?: Record<string, LocalTool>;
  log?: (line: string) => void;
}

export interface Agent {
  /** one user turn: model calls (and tool rounds) until the model answers in text */
  runTurn(userText: string): Promise<string>;
  /** answers one tool call the way the loop does (exported so a caller can route tool calls itself) */
  runTool(call: Pick<Anthropic.ToolUseBlock, 'id' | 'name' | 'input'>): Promise<{ content: string; isError: boolean }>;
}

/** Creates the conversation (system prompt first) unless it exists; an existing one is continued as it is. */
export async function startConversation(
  compactd: CompactdClient,
  conversation: { id: string; system: string; model: string; policy?: Record<string, unknown> },
): Promise<void> {
  try {
    await compactd.createConversation({
      id: conversation.id,
      model: conversation.model,
      ...(conversation.policy ? { policy: conversation.policy } : {}),
    });
  } catch (error) {
    if (isCompactdError(error, 'CONVERSATION_EXISTS')) return;
    throw error;
  }
  await compactd.appendMessages(conversation.id, [{ role: 'system', content: conversation.system }]);
}

/** The provider's content blocks as compactd stores them (thinking and server blocks are not history). */
function toStoredBlocks(content: Anthropic.ContentBlock[]): Block[] {
  const blocks: Block[] = [];
  for (const block of content) {
    if (block.type === 'text') blocks.push({ type: 'text', text: block.text });
    if (block.type === 'tool_use') blocks.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
  }
  return blocks;
}

/** The `compact` tool: enqueue with `trigger: "tool"` and answer at once; a refusal is the model's to read. */
async function compactToolCall(compactd: CompactdClient, id: string, input: unknown, log: (line: string) => void) {
  const focus = (input as { focus?: unknown } | null)?.focus;
  try {
    const job = await compactd.compact(id, { trigger: 'tool', ...(typeof focus === 'string' && focus.trim() !== '' ? { focus } : {}) });
    log(`compact tool: job ${job.id} ${job.deduplicated ? 'already running' : 'queued'}`);
    const running = job.deduplicated ? ' (one was already running)' : '';
    return {
      content: `Compaction job ${job.id} is ${job.status}${running}. Keep working: the following turns see the compacted history once it completes.`,
      isError: false,
    };
  } catch (error) {
    // e.g. COMPACTION_NOT_ELIGIBLE: too few tokens yet to be worth it
    if (isCompactdError(error) && error.status >= 400 && error.status < 500)
      return { content: error.detail ?? error.message, isError: true };
    throw error;
  }
}

export async function createAgent(options: AgentOptions): Promise<Agent> {
  const { compactd, anthropic, conversationId: id } = options;
  const log = options.log ?? (() => {});
  // The tool definition comes from the service, so its description states the tenant's real threshold.
  const compactTool = (await compactd.getTool('compact')) as Anthropic.Tool;
  const tools = [compactTool, ...Object.values(options.tools ?? {}).map((t) => t.definition)];

  async function runTool(call: Pick<Anthropic.ToolUseBlock, 'id' | 'name' | 'input'>) {
    if (call.name === 'compact') return compactToolCall(compactd, id, call.input, log);
    const tool = options.tools?.[call.name];
    if (!tool) return { content: `unknown tool ${call.name}`, isError: true };
    try {
      return { content: await tool.run(call.input), isError: false };
    } catch (error) {
      return { content: error instanceof Error ? error.message : String(error), isError: true };
    }
  }

  async function modelStep(): Promise<Anthropic.Message> {
    // The context is fetched fresh before every call: a compaction that finished meanwhile is picked up here.
    const context = await compactd.getContext(id);
    const response = await anthropic.messages.create({
      model: options.model,
      max_tokens: options.maxTokens ?? 1024,
      ...(context.system ? { system: context.system } : {}),
      messages: context.messages as unknown as Anthropic.MessageParam[],
      tools,
    });
    const usage = response.usage;
    const inputTokens = usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
    const stored = await compactd.appendMessages(id, {
      messages: [
        { role: 'assistant', content: toStoredBlocks(response.content), usage: { inputTokens, outputTokens: usage.output_tokens } },
      ],
      usage: { inputTokens },
    });
    if (stored.compaction) log(`compactd started compaction ${stored.compaction.id} (auto)`);
    return response;
  }

  async function runTurn(userText: string): Promise<string> {
    if (userText.startsWith('/compact')) {
      const focus = userText.slice('/compact'.length).trim();
      const job = await compactd.compact(id, focus ? { focus } : {});
      const done = await compactd.waitForJob(job.id, { timeoutMs: 120_000 });
      return done.status === 'completed'
        ? `compacted: ${done.result.tokensBefore} → ${done.result.tokensAfter} tokens, ${done.result.messagesArchived} messages archived`
        : `compaction ${done.status}${done.error ? `: ${done.error.message}` : ''}`;
    }
    await compactd.appendMessages(id, [{ role: 'user', content: userText }]);
    for (let step = 0; step < (options.maxSteps ?? 8); step += 1) {
      const response = await modelStep();
      const calls = response.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      if (response.stop_reason !== 'tool_use' || calls.length === 0) {
        return response.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      }
      const results: Block[] = [];
      for (const call of calls) {
        const result = await runTool(call);
        results.push({ type: 'tool_result', tool_use_id: call.id, content: result.content, ...(result.isError ? { is_error: true } : {}) });
      }
      const answer: InputMessage = { role: 'user', content: results };
      await compactd.appendMessages(id, [answer]);
    }
    throw new Error(`no final answer after ${options.maxSteps ?? 8} model calls`);
  }

  return { runTurn, runTool };
}

/** `npx tsx examples/agent-loop.ts TURN…`: one conversation, one line of output per turn. */
async function main(turns: string[]): Promise<void> {
  const env = process.env;
  const apiKey = env['COMPACTD_API_KEY'] ?? env['COMPACTD_BOOTSTRAP_KEY'];
  const compactd = createClient({ baseUrl: env['COMPACTD_URL'] ?? 'http://127.0.0.1:8080', apiKey });
  const anthropic = new Anthropic({
    apiKey: env['ANTHROPIC_API_KEY'] ?? 'not-needed',
    baseURL: env['ANTHROPIC_BASE_URL'] ?? null,
    maxRetries: 2,
  });
  const conversationId = env['AGENT_CONVERSATION'] ?? `agent-${Date.now()}`;
  const model = env['AGENT_MODEL'] ?? 'claude-opus-4-6';
  const policy = env['AGENT_POLICY'] ? (JSON.parse(env['AGENT_POLICY']) as Record<string, unknown>) : undefined;
  await startConversation(compactd, {
    id: conversationId,
    system: 'You are a careful coding agent. Keep answers short.',
    model,
    ...(policy ? { policy } : {}),
  });
  const agent = await createAgent({ compactd, anthropic, conversationId, model, log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`conversation ${conversationId}\n`);
  for (const turn of turns.length > 0 ? turns : ['Say hello.']) {
    const answer = await agent.runTurn(turn);
    process.stdout.write(`> ${turn}\n${answer}\n`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
