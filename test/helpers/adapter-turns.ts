import { type CompactdClient, createClient } from 'compactd/client';
import { afterAll, beforeAll } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../harness/llm-sim.js';
import { createStack, type Stack } from './stack.js';

/**
 * User turns for the adapter e2e tests: each carries a few hundred tokens of distinct
 * detail, so a conversation with a 4096-token window crosses compactd's auto trigger
 * within a handful of turns.
 */

/** compaction policy of the adapters' conversations: auto trigger on, a short kept tail */
export const AGENT_POLICY = { auto: true, minMessages: 6, cooldownMessages: 4, keepRecent: 4 };

const TOPICS = [
  'the LRU cache',
  'the retry queue',
  'the auth middleware',
  'the migration runner',
  'the metrics exporter',
  'the rate limiter',
];

export function agentTurn(n: number): string {
  const topic = TOPICS[n % TOPICS.length]!;
  const lines = Array.from(
    { length: 12 },
    (_, i) =>
      `step ${n}.${i}: in ${topic}, request ${n * 100 + i} failed with ECONNRESET after ${(i + 1) * 37} ms on worker-${(n + i) % 7}`,
  );
  return `Turn ${n}: look into ${topic}. The log says:\n${lines.join('\n')}\nWhat do you make of it?`;
}

/** An Anthropic Messages request as llm-sim logged it. */
export interface SimBody {
  system?: string | Array<{ type: string; text: string }>;
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string }>;
}

/** The system prompt of a logged request as one string (SDKs send a string or text blocks). */
export function systemText(body: SimBody): string {
  const system = body.system;
  return typeof system === 'string' ? system : (system ?? []).map((b) => b.text).join('\n');
}

/**
 * The stack every adapter e2e test runs against: llm-sim, the API in-process with its
 * worker, and a typed client for it; started before the file's tests, closed after.
 */
export function useAdapterStack(): { sim: TestLlmSim; stack: Stack; compactd: CompactdClient } {
  const env = {} as { sim: TestLlmSim; stack: Stack; compactd: CompactdClient };
  beforeAll(async () => {
    env.sim = await startTestLlmSim();
    env.stack = await createStack();
    const url = await env.stack.app.listen({ port: 0, host: '127.0.0.1' });
    env.compactd = createClient({ baseUrl: url, apiKey: env.stack.key });
  });
  afterAll(async () => {
    await env.stack?.close();
    await env.sim?.close();
  });
  return env;
}
