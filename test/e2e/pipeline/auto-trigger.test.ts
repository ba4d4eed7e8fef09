import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { waitFor } from '../../../harness/wait-for.js';
import { waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

/** A round of a coding agent: ~350 tokens, a tool call and its (verbose) result. */
function round(i: number) {
  const log = Array.from({ length: 12 }, (_, k) => `ok ${k + 1} src/feature${i}.test.ts > case ${k + 1}`).join('\n');
  return [
    { role: 'user', content: `Please make src/feature${i}.test.ts pass; never touch the public API.` },
    { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'run_tests', input: { file: `src/feature${i}.test.ts` } }] },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: `t${i}`,
          content: `${log}\nnot ok 13 Error: expected 3 to equal 4 at src/feature${i}.ts:${i + 10}`,
        },
      ],
    },
    { role: 'assistant', content: `Fixed the off-by-one in src/feature${i}.ts; the 13 tests pass.` },
  ];
}

const append = (id: string, messages: unknown[], usage?: { inputTokens: number }) =>
  stack.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/messages`,
    headers: stack.auth(),
    payload: { messages, ...(usage ? { usage } : {}) },
  });

const conversation = async (id: string) =>
  (await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}`, headers: stack.auth() })).json();

describe('automatic compaction', () => {
  it('warns past warnRatio, compacts past triggerRatio, then respects the cooldown', async () => {
    const policy = { minMessages: 8, cooldownMessages: 6, keepRecent: 4 };
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: 'auto', contextLimit: 4096, policy },
    });
    let triggered: { id: string; status: string } | null = null;
    let i = 0;
    let warned = false;
    while (!triggered && i < 40) {
      const res = await append('auto', round(i++));
      expect(res.statusCode).toBe(201);
      triggered = res.json().compaction;
      if (!triggered) warned ||= (await conversation('auto')).contextUsage.warning;
    }
    expect(warned).toBe(true);
    expect(triggered).not.toBeNull();
    const done = await waitForJob(stack, triggered!.id);
    expect(done.trigger).toBe('auto');
    expect(done.status, JSON.stringify(done.result ?? done.error)).toBe('completed');
    expect(done.result.tokensAfter).toBeLessThanOrEqual(0.8 * 4096);
    // within the cooldown no new auto job, even when the provider reports a full window
    const res = await append('auto', round(i).slice(0, 1), { inputTokens: 4000 });
    expect(res.json().compaction).toBeNull();
    expect((await conversation('auto')).compactionCount).toBe(1);
  });

  it('provider-reported usage wins over the own count', async () => {
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: 'reported', contextLimit: 200_000, policy: { minMessages: 4 } },
    });
    const quiet = await append('reported', round(1));
    expect(quiet.json().compaction).toBeNull();
    const loud = await append('reported', round(2), { inputTokens: 170_000 });
    expect(loud.json().compaction).not.toBeNull();
    const done = await waitForJob(stack, loud.json().compaction.id);
    // our own count is tiny: the plan has nothing worth doing, and says so
    expect(done.status).toBe('noop');
    await waitFor(async () => (await conversation('reported')).lastJob?.status === 'noop');
  });

  it('does not auto-compact when the policy turns it off', async () => {
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: 'manual-only', contextLimit: 2048, policy: { auto: false, minMessages: 1 } },
    });
    for (let i = 0; i < 12; i++) expect((await append('manual-only', round(i))).json().compaction).toBeNull();
    expect((await conversation('manual-only')).contextUsage.ratio).toBeGreaterThan(1);
  });
});

describe('the agent compact tool', () => {
  it('is refused below toolMinTokens and runs with trigger "tool" and the focus above it', async () => {
    await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: stack.auth(),
      payload: { id: 'tool', policy: { auto: false, toolMinTokens: 1500 } },
    });
    await append('tool', round(1));
    const early = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations/tool/compactions',
      headers: stack.auth(),
      payload: { trigger: 'tool', focus: 'the failing tests' },
    });
    expect(early.statusCode).toBe(422);
    expect(early.json().code).toBe('COMPACTION_NOT_ELIGIBLE');
    for (let i = 2; i < 10; i++) await append('tool', round(i));
    const res = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations/tool/compactions',
      headers: stack.auth(),
      payload: { trigger: 'tool', focus: 'the failing tests' },
    });
    expect(res.statusCode).toBe(202);
    const done = await waitForJob(stack, res.json().id);
    expect(done.trigger).toBe('tool');
    expect(done.status, JSON.stringify(done.result ?? done.error)).toBe('completed');
  });
});
