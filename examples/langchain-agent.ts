/**
 * A LangChain v1 agent (`createAgent` + `ChatAnthropic`) whose history lives in compactd,
 * through `compactdMiddleware` from `compactd/langchain` in place of `summarizationMiddleware`.
 * It sends scripted turns; compactd compacts on its own when the window fills, and the
 * following turns go to the model with the compacted context.
 *
 *   npx compactd llm-sim --port 8090 &
 *   COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npm start &
 *   COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npx tsx examples/langchain-agent.ts
 *
 * Optional: COMPACTD_URL, COMPACTD_API_KEY, ANTHROPIC_BASE_URL (a real endpoint works too,
 * with ANTHROPIC_API_KEY), AGENT_CONVERSATION, AGENT_TURNS (default 8).
 */
import { ChatAnthropic } from '@langchain/anthropic';
import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { createClient } from 'compactd/client';
import { compactdMiddleware } from 'compactd/langchain';
import { createAgent } from 'langchain';

import { EXAMPLE_CONVERSATION, exampleEnv, scriptedTurn } from './scripted-turns.js';

type Agent = {
  invoke(input: { messages: BaseMessage[] }, config: { configurable: { thread_id: string } }): Promise<{ messages: BaseMessage[] }>;
};

const env = exampleEnv();
const compactd = createClient({ baseUrl: env.compactdUrl, apiKey: env.apiKey });
const middleware = compactdMiddleware({
  client: compactd,
  ...EXAMPLE_CONVERSATION,
  onCompaction: (job) => console.log(`  compactd started compaction ${job.id} (auto)`),
  onError: (error, stage) =>
    console.error(
      `  compactd unreachable (${stage}): ${error instanceof Error ? error.message : String(error)}; the model gets the agent's own history`,
    ),
});
const model = new ChatAnthropic({
  model: EXAMPLE_CONVERSATION.model,
  apiKey: env.anthropicApiKey,
  anthropicApiUrl: env.anthropicBaseUrl,
  maxTokens: 512,
});
// createAgent's generics infer the state from every middleware; the example needs only invoke.
const agent = (createAgent as unknown as (params: object) => Agent)({
  model,
  tools: [],
  systemPrompt: 'You are a careful coding agent. Keep answers short.',
  middleware: [middleware],
});

console.log(`conversation ${env.conversationId}`);
let messages: BaseMessage[] = [];
for (let turn = 0; turn < env.turns; turn += 1) {
  const state = await agent.invoke(
    { messages: [...messages, new HumanMessage(scriptedTurn(turn))] },
    { configurable: { thread_id: env.conversationId } },
  );
  messages = state.messages;
  const answer = String(messages.at(-1)?.content ?? '');
  console.log(`turn ${turn + 1}: ${answer.slice(0, 80).replaceAll('\n', ' ')}…`);
}
const conversation = await compactd.getConversation(env.conversationId);
console.log(
  `the agent holds ${messages.length} messages; compactd: ${conversation.compactionCount} compaction(s), ${conversation.activeTokens} active tokens`,
);
