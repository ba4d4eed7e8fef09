import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { autoTriggerAfterAppend } from '../../../src/api/auto-trigger.js';
import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * `autoCompact: false` on an append (what `compactd import` sends) keeps the auto trigger
 * out of that append, and only of that one: the next ordinary append compacts as the
 * policy says.
 */
let t: TestApi;
beforeAll(async () => {
  t = await createTestApi({ afterAppend: autoTriggerAfterAppend });
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: t.auth(),
    payload: { id: 'quiet-import', contextLimit: 2000, policy: { minMessages: 0, cooldownMessages: 0 } },
  });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const long = (i: number) => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `message ${i}: ${'the deploy failed again on the staging host '.repeat(20)}`,
});
const append = (payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/v1/conversations/quiet-import/messages', headers: t.auth(), payload });

describe('append with autoCompact: false', () => {
  it('starts no compaction past the threshold, keeps the warning flag, and the next ordinary append compacts', async () => {
    const quiet = await append({ messages: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(long), autoCompact: false });
    expect(quiet.statusCode, quiet.body).toBe(201);
    expect(quiet.json().activeTokens).toBeGreaterThan(0.8 * 2000);
    expect(quiet.json().compaction).toBeNull();
    const conversation = (await t.app.inject({ method: 'GET', url: '/v1/conversations/quiet-import', headers: t.auth() })).json();
    expect(conversation.contextUsage.warning).toBe(true);
    expect(conversation.lastJob).toBeNull();

    const ordinary = await append({ messages: [long(10)] });
    expect(ordinary.statusCode, ordinary.body).toBe(201);
    expect(ordinary.json().compaction).toMatchObject({ status: 'queued' });
  });

  it('rejects a non-boolean autoCompact naming the field', async () => {
    const res = await append({ messages: [long(11)], autoCompact: 'no' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { field: string }) => e.field)).toContain('body.autoCompact');
  });
});
