import Anthropic from '@anthropic-ai/sdk';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Compactions the gateway starts go through the tenant's quotas like the append's auto
 * trigger, and its waits are the job waiters' (LISTEN/NOTIFY, under the per-tenant cap of open
 * waiters). No workers run here: a job stays queued, so a request that waits for one keeps
 * waiting until the test lets it go.
 */

let sim: TestLlmSim;
let stack: Stack;
let base: string;

beforeAll(async () => {
  sim = await startTestLlmSim({ keepBodies: 100 });
  stack = await createStack({
    workers: false,
    env: {
      ANTHROPIC_BASE_URL: sim.url,
      ANTHROPIC_API_KEY: 'sk-ant-configured',
      COMPACTD_SUMMARIZER: 'local',
      COMPACTD_TENANT_MAX_ACTIVE: '2',
      COMPACTD_TENANT_MAX_WAITERS: '2',
    },
  });
  base = await stack.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});

const long = (i: number) => `Part ${i}. ${'A build log line with an error in src/module.ts at line 12. '.repeat(120)}`;

/** A request over its conversation's window (each turn ~1,500 tokens, the window 2,048). */
function overTheWindow(id: string, signal: AbortSignal) {
  const client = new Anthropic({ apiKey: stack.key, baseURL: `${base}/gateway/anthropic`, maxRetries: 0 });
  const messages: Anthropic.MessageParam[] = [
    { role: 'user', content: long(0) },
    { role: 'assistant', content: 'Noted.' },
    { role: 'user', content: long(1) },
  ];
  return client.messages
    .create({ model: 'claude-haiku-4-5', max_tokens: 20, messages }, { headers: { 'x-compactd-conversation': id }, signal })
    .withResponse();
}

describe('gateway compactions under a tenant limited to 2 active compactions', () => {
  it('5 conversations over their window start at most 2 jobs; the others go upstream as they are, and a third waiter is a 429', async () => {
    for (let i = 0; i < 5; i += 1) {
      const created = await stack.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: stack.auth(),
        payload: { id: `q-${i}`, contextLimit: 2_048, policy: { minMessages: 2, keepRecent: 1 } },
      });
      expect(created.statusCode).toBe(201);
    }
    const abort = new AbortController();
    const requests = Array.from({ length: 5 }, (_, i) =>
      overTheWindow(`q-${i}`, abort.signal).then(
        (answer) => ({ answered: answer.response.headers.get('x-compactd-gateway') }),
        (error: unknown) => ({ error }),
      ),
    );
    // three requests get no compaction (the quota) and are answered as they are; two wait for theirs
    await waitFor(async () => sim.control.callLog().length >= 3, 20_000, 50, 'three requests forwarded');
    const jobs = await stack.deps.db.execute<{ n: number }>(sql`select count(*)::int as n from compaction_jobs`);
    expect(jobs[0]?.n).toBe(2);
    // the tenant's two waiters are taken: a third request that must wait is a 429 with retry-after, in the provider's shape
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: 'q-extra', contextLimit: 2_048, policy: { minMessages: 2, keepRecent: 1 } },
    });
    await stack.deps.db.execute(sql`update tenants set max_active_compactions = 10`);
    const refused = await overTheWindow('q-extra', new AbortController().signal).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toMatch(/^\d+$/);
    abort.abort();
    const settled = await Promise.all(requests);
    expect(settled.filter((r) => 'answered' in r)).toHaveLength(3);
  });
});
