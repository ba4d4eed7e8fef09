import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { ContextMessage } from '../../../../src/compaction/context/place-tool-results.js';
import {
  CONTEXT_OPENING_USER_TURN,
  renderAnthropicContext,
  renderOpenAIContext,
} from '../../../../src/compaction/context/render-context.js';
import type { Block, Role } from '../../../../src/compaction/types.js';
import { validateAnthropicRequest } from '../../../../src/llm-sim/validate-anthropic.js';
import { validateOpenAIRequest } from '../../../../src/llm-sim/validate-openai.js';
import { text, toolResult, toolUse } from '../../../fixtures/builders.js';
import { conversationArb } from '../arbitraries.js';

/** GET /context bodies: every history renders to a request both providers accept. */

const m = (role: Role, content: string | Block[]): ContextMessage => ({
  role,
  content: typeof content === 'string' ? [text(content)] : content,
});

function expectValid(history: readonly ContextMessage[]): void {
  expect(validateAnthropicRequest(renderAnthropicContext(history))).toBeNull();
  expect(validateOpenAIRequest(renderOpenAIContext(history))).toBeNull();
}

describe('placing tool results', () => {
  // The shape a Claude Code session with parallel calls was imported as: the second call's
  // result several messages after its call, with other turns in between.
  const interleaved = [
    m('user', 'fix the build'),
    m('assistant', [
      text('Reading both files.'),
      toolUse('toolu_a', 'Read', { path: 'a.ts' }),
      toolUse('toolu_b', 'Read', { path: 'b.ts' }),
    ]),
    m('user', [toolResult('toolu_a', 'A')]),
    m('assistant', 'Waiting for b.ts.'),
    m('user', [text('also check c.ts'), toolResult('toolu_b', 'B')]),
  ];

  it('moves every result right after its call (Anthropic)', () => {
    expect(renderAnthropicContext(interleaved).messages).toEqual([
      { role: 'user', content: [text('fix the build')] },
      { role: 'assistant', content: interleaved[1]!.content },
      { role: 'user', content: [toolResult('toolu_a', 'A'), toolResult('toolu_b', 'B')] },
      { role: 'assistant', content: [text('Waiting for b.ts.')] },
      { role: 'user', content: [text('also check c.ts')] },
    ]);
    expectValid(interleaved);
  });

  it('moves every result right after its call (OpenAI)', () => {
    const roles = renderOpenAIContext(interleaved).messages.map((x) => (x.role === 'tool' ? `tool:${x.tool_call_id}` : x.role));
    expect(roles).toEqual(['user', 'assistant', 'tool:toolu_a', 'tool:toolu_b', 'assistant', 'user']);
  });

  it('keeps an unanswered call, an orphaned result and a repeated result as text', () => {
    const history = [
      m('user', [toolResult('toolu_gone', 'stale output')]),
      m('assistant', [toolUse('toolu_1', 'Bash', { command: 'ls' })]),
      m('tool', [toolResult('toolu_1', 'a b')]),
      m('tool', [toolResult('toolu_1', 'a b again')]),
      m('assistant', [text('Running tests.'), toolUse('toolu_2', 'Bash', { command: 'npm test' })]),
    ];
    const { messages } = renderAnthropicContext(history);
    expect(JSON.stringify(messages)).toContain('[tool result unknown id=toolu_gone]\\nstale output');
    expect(JSON.stringify(messages)).toContain('[tool result Bash id=toolu_1]\\na b again');
    expect(messages.at(-1)).toEqual({
      role: 'assistant',
      content: [text('Running tests.'), text('[tool call Bash id=toolu_2]\n{"command":"npm test"}')],
    });
    expectValid(history);
  });
});

describe('Anthropic shape', () => {
  it('sends the clip-archive to top-level system and opens with a user turn', () => {
    const history = [
      m('system', 'You are a coding agent.'),
      m('system', '<archive>summary</archive>'),
      m('assistant', 'Done with step 1.'),
      m('user', 'next'),
    ];
    const context = renderAnthropicContext(history);
    expect(context.system).toBe('You are a coding agent.\n\n<archive>summary</archive>');
    expect(context.messages[0]).toEqual({ role: 'user', content: [text(CONTEXT_OPENING_USER_TURN)] });
    expect(renderOpenAIContext(history).messages[0]).toEqual({ role: 'system', content: 'You are a coding agent.' });
    expectValid(history);
  });

  it('drops blank text, keeps an empty result, trims the end of a final assistant turn', () => {
    const history = [
      m('user', [text('  '), text('go')]),
      m('assistant', [text(''), toolUse('toolu_1', 'Bash', {})]),
      m('user', [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [text(' ')] }]),
      m('user', ' \n'),
      m('assistant', 'All done.\n\n'),
    ];
    const { messages } = renderAnthropicContext(history);
    expect(messages).toEqual([
      { role: 'user', content: [text('go')] },
      { role: 'assistant', content: [toolUse('toolu_1', 'Bash', {})] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '' }] },
      { role: 'assistant', content: [text('All done.')] },
    ]);
    expectValid(history);
  });

  it('rewrites ids and inputs Anthropic refuses, the same way for a call and its result', () => {
    const history = [
      m('user', 'go'),
      m('assistant', [toolUse('fn:read/1', 'read', 'not json'), toolUse('fn_read_1', 'read', [1])]),
      m('tool', [toolResult('fn:read/1', 'x'), toolResult('fn_read_1', 'y')]),
    ];
    const { messages } = renderAnthropicContext(history);
    expect(messages[1]?.content).toEqual([
      toolUse('fn_read_1', 'read', { arguments: 'not json' }),
      toolUse('fn_read_1_2', 'read', { arguments: [1] }),
    ]);
    expect(messages[2]?.content).toEqual([toolResult('fn_read_1', 'x'), toolResult('fn_read_1_2', 'y')]);
    expectValid(history);
  });
});

const ids = ['toolu_1', 'toolu_2', 'toolu_3', 'call:4'];
const blockArb: fc.Arbitrary<Block> = fc.oneof(
  fc.constantFrom('', ' ', 'hello', 'line\n').map(text),
  fc
    .record({ id: fc.constantFrom(...ids), input: fc.constantFrom<unknown>({}, 'raw', null, { a: 1 }) })
    .map(({ id, input }) => toolUse(id, 'Tool', input)),
  fc
    .record({ id: fc.constantFrom(...ids, 'toolu_gone'), content: fc.constantFrom('', 'out') })
    .map(({ id, content }) => toolResult(id, content)),
);
const messySourceArb = fc
  .array(fc.record({ role: fc.constantFrom<Role>('system', 'user', 'assistant', 'tool'), content: fc.array(blockArb, { maxLength: 4 }) }), {
    maxLength: 14,
  })
  .map((messages) =>
    // what normalization lets through: calls only from the assistant, results only from user/tool
    messages.map((x) => ({
      role: x.role,
      content: x.content.filter((b) =>
        b.type === 'tool_use' ? x.role === 'assistant' : b.type === 'tool_result' ? x.role === 'user' || x.role === 'tool' : true,
      ),
    })),
  );

describe('any history renders to a valid request', () => {
  it('generated conversations (parallel calls, interleaving, orphans, pending calls, clip-archive)', () => {
    // (an empty conversation has no request to send: Anthropic needs one message at least)
    const conversations = conversationArb.filter(({ messages }) => messages.some((x) => x.role !== 'system'));
    fc.assert(
      fc.property(conversations, ({ messages }) => expectValid(messages)),
      { numRuns: 300 },
    );
  });

  it('messy block soups (blank text, repeated ids, results before calls, odd inputs)', () => {
    fc.assert(
      fc.property(messySourceArb, (history) => {
        const openai = renderOpenAIContext(history);
        if (openai.messages.length > 0) expect(validateOpenAIRequest(openai)).toBeNull();
        const anthropic = renderAnthropicContext(history);
        // an empty Anthropic list only when nothing but system text (or nothing) was there
        if (anthropic.messages.length === 0) expect(openai.messages.every((x) => x.role === 'system')).toBe(true);
        else expect(validateAnthropicRequest(anthropic)).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });
});
