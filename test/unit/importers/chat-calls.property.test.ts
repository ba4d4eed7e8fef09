import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { importTranscript } from '../../../src/importers/index.js';

/**
 * OpenAI and Anthropic chat logs: whatever the replies, every tool call in the imported
 * history is the call the model made (id, name, arguments) and every call gets back the
 * result the log gave it — including arguments a logger stored parsed, and malformed ones.
 */

const idArb = fc.stringMatching(/^[A-Za-z0-9_]{4,12}$/);
const nameArb = fc.stringMatching(/^[a-z][a-z_]{1,15}$/);
const argsArb = fc.dictionary(
  fc.stringMatching(/^[a-z]{1,8}$/),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 })),
  { maxKeys: 4 },
);
const textArb = fc.string({ minLength: 1 }).filter((s) => s.trim() !== '' && !s.includes('\u0000'));

interface Call {
  id: string;
  name: string;
  input: unknown;
  result: string;
}
/** A run of replies, each with 1–3 calls; ids unique across the run. */
const runArb = fc
  .array(
    fc.array(fc.record({ name: nameArb, input: argsArb, result: textArb, raw: fc.constantFrom('string', 'parsed', 'malformed') }), {
      minLength: 1,
      maxLength: 3,
    }),
    { minLength: 1, maxLength: 5 },
  )
  .chain((replies) =>
    fc.uniqueArray(idArb, { minLength: replies.flat().length, maxLength: replies.flat().length }).map((ids) => {
      let next = 0;
      return replies.map((calls) => calls.map((call) => ({ ...call, id: ids[next++]! })));
    }),
  );

function expectCalls(text: string, expected: Array<Call & { raw: string }>) {
  const [conversation] = importTranscript(text).conversations;
  const calls = conversation!.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_use' ? [b] : [])));
  const results = new Map(
    conversation!.messages.flatMap((m) =>
      m.content.flatMap((b) => (b.type === 'tool_result' ? [[b.tool_use_id, b.content] as const] : [])),
    ),
  );
  expect(calls.map((c) => ({ id: c.id, name: c.name, input: c.input }))).toEqual(
    expected.map((c) => ({ id: c.id, name: c.name, input: c.raw === 'malformed' ? `${JSON.stringify(c.input)}}` : c.input })),
  );
  for (const call of expected) expect(results.get(call.id)).toBe(call.result);
}

describe('chat logs: the imported calls are the model’s', () => {
  it('OpenAI tool_calls, with arguments as a JSON string, parsed, or malformed', () => {
    fc.assert(
      fc.property(runArb, (replies) => {
        const messages: unknown[] = [{ role: 'user', content: 'go' }];
        for (const calls of replies) {
          messages.push({
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: {
                name: c.name,
                arguments: c.raw === 'parsed' ? c.input : c.raw === 'malformed' ? `${JSON.stringify(c.input)}}` : JSON.stringify(c.input),
              },
            })),
          });
          for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: c.result });
        }
        expectCalls(JSON.stringify(messages), replies.flat());
      }),
      { numRuns: 60 },
    );
  });

  it('Anthropic tool_use blocks', () => {
    fc.assert(
      fc.property(runArb, (replies) => {
        const messages: unknown[] = [{ role: 'user', content: 'go' }];
        for (const calls of replies) {
          messages.push({ role: 'assistant', content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })) });
          messages.push({ role: 'user', content: calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: c.result })) });
        }
        expectCalls(
          JSON.stringify({ system: 'be brief', messages }),
          replies.flat().map((c) => ({ ...c, raw: 'string' })),
        );
      }),
      { numRuns: 60 },
    );
  });
});
