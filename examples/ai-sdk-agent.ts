/**
 * A Vercel AI SDK agent (`generateText` + `@ai-sdk/anthropic`) whose history lives in
 * compactd, through `compactdSession` from `compactd/ai-sdk`: `prepareStep` hands each step
 * compactd's ready context, `onStepFinish` stores the answer with its usage. compactd
 * compacts on its own when the window fills.
 *
 *   npx compactd llm-sim --port 8090 &
 *   COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npm start &
 *   COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npx tsx examples/ai-sdk-agent.ts
 *
 * Optional: COMPACTD_URL, COMPACTD_API_KEY, ANTHROPIC_BASE_URL (a real endpoint works too,
 * with ANTHROPIC_API_KEY), AGENT_CONVERSATION, AGENT_TURNS (default 8).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, type ModelMessage } from 'ai';
import { compactdSession } from 'compactd/ai-sdk';
import { createClient } from 'compactd/client';

import { EXAMPLE_CONVERSATION, exampleEnv, scriptedTurn } from './scripted-turns.js';

const env = exampleEnv();
const system = 'You are a careful coding agent. Keep answers short.';
const compactd = createClient({ baseUrl: env.compactdUrl, apiKey: env.apiKey });
const session = compactdSession({
  client: compactd,
  conversationId: env.conversationId,
  system,
  ...EXAMPLE_CONVERSATION,
  onCompaction: (job) => console.log(`  compactd started compaction ${job.id} (auto)`),
  onError: (error, stage) =>
    console.error(
      `  compactd unreachable (${stage}): ${error instanceof Error ? error.message : String(error)}; the step gets the SDK's own messages`,
    ),
});
// the SDK appends /messages to its base URL
const anthropic = createAnthropic({ baseURL: `${env.anthropicBaseUrl.replace(/\/$/, '')}/v1`, apiKey: env.anthropicApiKey });

console.log(`conversation ${env.conversationId}`);
const messages: ModelMessage[] = [];
for (let turn = 0; turn < env.turns; turn += 1) {
  messages.push({ role: 'user', content: scriptedTurn(turn) });
  const result = await generateText({
    model: anthropic(EXAMPLE_CONVERSATION.model),
    system,
    messages,
    maxOutputTokens: 512,
    prepareStep: session.prepareStep,
    onStepFinish: session.onStepFinish,
  });
  messages.push(...result.response.messages);
  console.log(`turn ${turn + 1}: ${result.text.slice(0, 80).replaceAll('\n', ' ')}…`);
}
const conversation = await compactd.getConversation(env.conversationId);
console.log(
  `the app holds ${messages.length} messages; compactd: ${conversation.compactionCount} compaction(s), ${conversation.activeTokens} active tokens`,
);
