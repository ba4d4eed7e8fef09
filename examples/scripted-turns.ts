/**
 * The user turns the framework examples send: a debugging session with enough detail per
 * turn (log excerpts) that a conversation with a small window (the examples use 4096
 * tokens) reaches compactd's auto trigger within a few turns.
 */
const TOPICS = [
  'the LRU cache',
  'the retry queue',
  'the auth middleware',
  'the migration runner',
  'the metrics exporter',
  'the rate limiter',
];

export function scriptedTurn(n: number): string {
  const topic = TOPICS[n % TOPICS.length]!;
  const log = Array.from(
    { length: 12 },
    (_, i) => `  ${topic}: request ${n * 100 + i} failed with ECONNRESET after ${(i + 1) * 37} ms on worker-${(n + i) % 7}`,
  );
  return `Turn ${n + 1}: look into ${topic}. The log says:\n${log.join('\n')}\nWhat do you make of it?`;
}

/** A small window and a short kept tail, so the examples show a compaction within a few turns. */
export const EXAMPLE_CONVERSATION = {
  model: 'claude-sonnet-4-5',
  contextLimit: 4096,
  policy: { auto: true, minMessages: 6, cooldownMessages: 4, keepRecent: 4 },
};

/** Where the examples find compactd and the model (defaults: `npm start` and `compactd llm-sim --port 8090`). */
export function exampleEnv(env: NodeJS.ProcessEnv = process.env) {
  return {
    compactdUrl: env['COMPACTD_URL'] ?? 'http://127.0.0.1:8080',
    apiKey: env['COMPACTD_API_KEY'] ?? env['COMPACTD_BOOTSTRAP_KEY'],
    anthropicBaseUrl: env['ANTHROPIC_BASE_URL'] ?? 'http://127.0.0.1:8090',
    anthropicApiKey: env['ANTHROPIC_API_KEY'] ?? 'not-needed',
    conversationId: env['AGENT_CONVERSATION'] ?? `example-${Date.now()}`,
    turns: Number(env['AGENT_TURNS'] ?? 8),
  };
}
