import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApi, type TestApi } from '../../helpers/api.js';

/**
 * Meta turns at append: a user message that is only a known harness wrapper (task
 * notification, slash command, command output, reminder) is stored as a meta turn and
 * listed with `meta: true`, its content unchanged; the client can say `metadata.meta`
 * itself, either way.
 */
let t: TestApi;
beforeAll(async () => {
  t = await createTestApi();
});
afterAll(async () => {
  await t?.close();
});

const NOTIFICATION =
  '<task-notification>\n<task-id>b7636e2</task-id>\n<status>completed</status>\n</task-notification>\nRead the output file to retrieve the result: /tmp/b7636e2.output';
const SLASH =
  '<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>and continue</command-args>';

describe('POST messages: meta turns', () => {
  it('flags known wrappers and client-flagged turns, keeps typed requests and content as sent', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/conversations', headers: t.auth(), payload: { id: 'meta-1' } });
    expect(created.statusCode).toBe(201);
    const messages = [
      { role: 'user', content: 'Port the lexer to Rust.' },
      { role: 'assistant', content: 'Starting.' },
      { role: 'user', content: NOTIFICATION },
      { role: 'user', content: [{ type: 'text', text: SLASH }] },
      { role: 'user', content: 'Added workspace context', metadata: { meta: true } },
      { role: 'user', content: '<system-reminder>quoted on purpose</system-reminder>', metadata: { meta: false } },
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>hook output</system-reminder>' },
          { type: 'text', text: 'and also add tests' },
        ],
      },
    ];
    const appended = await t.app.inject({
      method: 'POST',
      url: '/v1/conversations/meta-1/messages',
      headers: t.auth(),
      payload: { messages },
    });
    expect(appended.statusCode, appended.body).toBe(201);
    const listed = await t.app.inject({ method: 'GET', url: '/v1/conversations/meta-1/messages', headers: t.auth() });
    expect(listed.statusCode).toBe(200);
    const stored = listed.json().messages as Array<{ seq: number; meta?: boolean; content: Array<{ text: string }> }>;
    expect(stored.map((m) => m.meta === true)).toEqual([false, false, true, true, true, false, false]);
    expect(stored[2]?.content).toEqual([{ type: 'text', text: NOTIFICATION }]);
    expect(stored[0]).not.toHaveProperty('meta');
  });
});
