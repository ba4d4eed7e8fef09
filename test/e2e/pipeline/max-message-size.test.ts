import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bigText, type BigTextShape } from '../../helpers/big-texts.js';
import { compact, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Every message the API accepts can be archived, searched and compacted (SPEC §8, abuse
 * bounds): one message of exactly COMPACTD_MAX_MESSAGE_BYTES (the default, 2 MB, as JSON) of
 * each shape a client pastes is appended, compacted by the local summarizer, kept verbatim in
 * the archive and found by a word inside it. Before, such a message failed every compaction
 * (the identifier ranking overflowed the stack; the search vector refused it) or froze the API
 * while its tokens were counted.
 */

const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
const MARKER = 'zebracorn';
const SHAPES: readonly BigTextShape[] = ['prose', 'dense-logs', 'long-line', 'whitespace-table'];

/** A user message whose JSON is exactly the limit: a word to search for, then the shape. */
function maxSizeMessage(shape: BigTextShape): { role: 'user'; content: string } {
  const head = `Pasted by ${MARKER}:\n`;
  const jsonBytes = (body: string) => Buffer.byteLength(JSON.stringify({ role: 'user', content: head + body }), 'utf8');
  const body = bigText(shape, MAX_MESSAGE_BYTES, jsonBytes);
  return { role: 'user', content: head + body };
}

const small = (role: 'user' | 'assistant', text: string) => ({ role, content: text });

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('a message at the maximum message size', () => {
  it.each(SHAPES)(
    'of %s is appended, compacted, archived verbatim and found by a word inside it',
    async (shape) => {
      const id = `max-${shape}`;
      const big = maxSizeMessage(shape);
      expect(Buffer.byteLength(JSON.stringify(big), 'utf8')).toBe(MAX_MESSAGE_BYTES);
      const created = await stack.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: stack.auth(),
        payload: { id, policy: { auto: false, keepRecent: 2 } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const messages = [
        small('user', 'Here is the output I got.'),
        big,
        small('assistant', 'I read it; the failure is in the worker.'),
        small('user', 'Fix it.'),
        small('assistant', 'On it.'),
      ];
      for (const message of messages) {
        const res = await stack.app.inject({
          method: 'POST',
          url: `/v1/conversations/${id}/messages`,
          headers: stack.auth(),
          payload: { messages: [message] },
        });
        expect(res.statusCode, res.body.slice(0, 500)).toBe(201);
      }

      const job = await compact(stack, id, { strategy: 'summarize' });
      const done = await waitForJob(stack, job.id, 400_000);
      expect(done.status, JSON.stringify(done.error)).toBe('completed');

      // the archive keeps the message byte for byte
      const exported = await stack.app.inject({
        method: 'GET',
        url: `/v1/conversations/${id}/export?clipArchive=false`,
        headers: stack.auth(),
      });
      expect(exported.statusCode).toBe(200);
      const lines = exported.body
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as { seq: number; archived: boolean; content: Array<{ type: string; text?: string }> });
      const original = lines.find((line) => line.seq === 2);
      expect(original?.archived).toBe(true);
      expect(original?.content).toHaveLength(1);
      expect(original?.content[0]?.text === big.content, 'the archived text differs from the appended one').toBe(true);

      const search = await stack.app.inject({
        method: 'GET',
        url: `/v1/conversations/${id}/archive/search?q=${MARKER}`,
        headers: stack.auth(),
      });
      expect(search.statusCode, search.body.slice(0, 500)).toBe(200);
      const hits = (search.json() as { hits: Array<{ seq: number; snippet: string }> }).hits;
      expect(hits.map((hit) => hit.seq)).toContain(2);
      expect(search.body.length).toBeLessThan(64 * 1024);
    },
    600_000,
  );
});
