import { describe, expect, it } from 'vitest';

import type { ActiveRow } from '../../../../src/api/gateway/upstream-body.js';
import { buildUpstreamBody, contextRows, isClientBody, withCompactionBeta } from '../../../../src/api/gateway/upstream-body.js';
import { CONTEXT_OPENING_USER_TURN } from '../../../../src/compaction/context/index.js';

const history = [
  { role: 'user', content: 'first', extra: 1 },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ls', input: {} }] },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a very long listing', cache_control: { type: 'ephemeral' } }],
  },
  { role: 'assistant', content: 'done' },
  { role: 'user', content: 'next' },
];
const own = (position: number, seq = position + 10): ActiveRow => ({
  seq,
  kind: 'message',
  role: 'user',
  position,
  rewritten: false,
  content: null,
});
const clip: ActiveRow = {
  seq: 1,
  kind: 'clip_archive',
  role: 'system',
  position: null,
  rewritten: false,
  content: [{ type: 'text', text: '<compactd-archive>earlier work</compactd-archive>' }],
};

describe('buildUpstreamBody (Anthropic)', () => {
  it('sends the client body untouched while nothing is archived', () => {
    const body = { model: 'm', system: 'sys', messages: history, max_tokens: 5 };
    const out = buildUpstreamBody(
      'anthropic',
      body,
      0,
      history,
      history.map((_, i) => own(i)),
    );
    expect(JSON.stringify(out)).toBe(JSON.stringify(body));
  });

  it('replaces the archived prefix with the clip-archive after the client system prompt, keeping the order of the keys', () => {
    const body = {
      model: 'm',
      system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
      messages: history,
      tools: [],
    };
    const out = buildUpstreamBody('anthropic', body, 0, history, [clip, own(3), own(4)]);
    expect(Object.keys(out)).toEqual(['model', 'system', 'messages', 'tools']);
    expect(out['system']).toEqual([body.system[0], { type: 'text', text: '<compactd-archive>earlier work</compactd-archive>' }]);
    // the kept tail starts with an assistant turn: an opening user turn comes first
    expect(out['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: CONTEXT_OPENING_USER_TURN }] },
      history[3],
      history[4],
    ]);
  });

  it('sends a rewritten message as compactd holds it, the others as the client sent them', () => {
    const masked: ActiveRow = {
      ...own(2),
      rewritten: true,
      content: [{ type: 'tool_result', tool_use_id: 't1', content: '[masked: 3 lines]' }],
    };
    const out = buildUpstreamBody('anthropic', { messages: history }, 0, history, [own(0), own(1), masked, own(3), own(4)]);
    const messages = out['messages'] as unknown[];
    expect(messages[0]).toBe(history[0]);
    expect(messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '[masked: 3 lines]' }] });
  });

  it('never merges two turns of the client', () => {
    const twice = [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ];
    expect(buildUpstreamBody('anthropic', { messages: twice }, 0, twice, [own(0), own(1)])['messages']).toEqual(twice);
  });
});

describe('buildUpstreamBody (a provider clip)', () => {
  it('keeps a compaction block first, the clip-archive in system and no opening turn before it', () => {
    const clipTurn = { role: 'assistant', content: [{ type: 'compaction', content: 'Summary.', signature: 'simsig1.a.b' }] };
    const messages = [clipTurn, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }];
    // stored at positions 7.. (positions before the clip were the provider's to compact)
    const positioned = new Array<unknown>(7).concat(messages);
    const out = buildUpstreamBody('anthropic', { system: 'sys', messages }, 0, positioned, [
      own(7),
      { ...clip, seq: 18 },
      own(9, 19),
      own(10, 20),
    ]);
    expect(out['messages']).toEqual([clipTurn, messages[2], messages[3]]);
    expect(out['system']).toEqual([
      { type: 'text', text: 'sys' },
      { type: 'text', text: '<compactd-archive>earlier work</compactd-archive>' },
    ]);
  });
});

describe('buildUpstreamBody (Responses)', () => {
  const input = [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the cache' }] },
    { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"npm test"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'a very long log' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Fixed.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
  ];
  const body = { model: 'gpt-5-mini', instructions: 'Be brief.', input, stream: true };

  it('keeps the leading developer items and the client items, the clip-archive as a developer message in place', () => {
    const out = buildUpstreamBody('responses', body, 1, input.slice(1), [clip, own(3), own(4)]);
    expect(Object.keys(out)).toEqual(Object.keys(body));
    expect(out['instructions']).toBe('Be brief.');
    expect(out['input']).toEqual([
      input[0],
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<compactd-archive>earlier work</compactd-archive>' }] },
      input[4],
      input[5],
    ]);
    expect(
      isClientBody(
        buildUpstreamBody(
          'responses',
          body,
          1,
          input.slice(1),
          [0, 1, 2, 3, 4].map((p) => own(p)),
        ),
        body,
        'input',
      ),
    ).toBe(true);
  });

  it('sends a rewritten tool output as a function_call_output for the same call', () => {
    const masked: ActiveRow = {
      ...own(2),
      role: 'tool',
      rewritten: true,
      content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '[masked: 40 lines]' }],
    };
    const out = buildUpstreamBody('responses', body, 1, input.slice(1), [own(0), own(1), masked, own(3), own(4)]);
    expect((out['input'] as unknown[])[3]).toEqual({ type: 'function_call_output', call_id: 'call_1', output: '[masked: 40 lines]' });
  });
});

describe('buildUpstreamBody (OpenAI)', () => {
  it('keeps the leading instructions first and puts the clip-archive after them as a system message', () => {
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'old' },
      { role: 'assistant', content: 'x' },
      { role: 'user', content: 'new' },
    ];
    const out = buildUpstreamBody('openai', { model: 'g', messages }, 1, messages.slice(1), [clip, own(2)]);
    expect(out['messages']).toEqual([
      messages[0],
      { role: 'system', content: '<compactd-archive>earlier work</compactd-archive>' },
      messages[3],
    ]);
  });
});

describe('isClientBody', () => {
  const history = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'b' },
  ];
  const body = { model: 'm', system: 's', messages: history };
  const own = (position: number) => ({
    seq: position + 1,
    kind: 'message' as const,
    role: 'user' as const,
    position,
    rewritten: false,
    content: null,
  });

  it('is the client body while the context is the client history as sent', () => {
    expect(isClientBody(buildUpstreamBody('anthropic', body, 0, history, [own(0), own(1)]), body)).toBe(true);
  });

  it('is not once a message is dropped, rewritten or a clip-archive is added', () => {
    expect(isClientBody(buildUpstreamBody('anthropic', body, 0, history, [own(1)]), body)).toBe(false);
    expect(
      isClientBody(
        buildUpstreamBody('anthropic', body, 0, history, [
          own(0),
          { ...own(1), rewritten: true, content: [{ type: 'text', text: 'masked' }] },
        ]),
        body,
      ),
    ).toBe(false);
    const archive = {
      seq: 0,
      kind: 'clip_archive' as const,
      role: 'system' as const,
      position: null,
      rewritten: false,
      content: [{ type: 'text' as const, text: 'archive' }],
    };
    expect(isClientBody(buildUpstreamBody('anthropic', body, 0, history, [archive, own(0), own(1)]), body)).toBe(false);
  });
});

describe('contextRows', () => {
  const row = (seq: number, position: number | null): ActiveRow => ({
    seq,
    kind: position === null ? 'clip_archive' : 'message',
    role: 'user',
    position,
    rewritten: false,
    content: null,
  });
  it("keeps the stored rows up to the first past the shared prefix, then the client's own messages", () => {
    const rows = [row(1, null), row(5, 3), row(6, 4), row(7, 5)];
    // the client shares positions 0..4; position 5 is an answer it has not sent back yet
    expect(contextRows(rows, 5, 6).map((r) => [r.seq, r.position])).toEqual([
      [1, null],
      [5, 3],
      [6, 4],
      [7, 5],
    ]);
    // a concurrent request stored other turns from position 4 on: the client's own are sent instead
    expect(contextRows(rows, 4, 6).map((r) => r.position)).toEqual([null, 3, 4, 5]);
    expect(
      contextRows(rows, 4, 6)
        .slice(2)
        .every((r) => r.seq > 5),
    ).toBe(true);
  });
});

describe('cache breakpoint and native clip (SPEC §5.10)', () => {
  const plain = [
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'next' },
  ];
  const rows = (clipRow: ActiveRow) => [clipRow, { ...own(1), role: 'assistant' as const }, own(2)];

  it('marks a rewritten context for a client that places no breakpoint, and leaves the others as they are', () => {
    const out = buildUpstreamBody('anthropic', { model: 'm', messages: plain }, 0, plain, rows(clip));
    expect(out['cache_control']).toEqual({ type: 'ephemeral' });
    const untouched = buildUpstreamBody('anthropic', { model: 'm', messages: plain }, 0, plain, [own(0), own(1), own(2)]);
    expect(untouched['cache_control']).toBeUndefined();
    const marked = [plain[0], plain[1], { role: 'user', content: [{ type: 'text', text: 'next', cache_control: { type: 'ephemeral' } }] }];
    const own3 = buildUpstreamBody('anthropic', { model: 'm', messages: marked }, 0, marked, rows(clip));
    expect(own3['cache_control']).toBeUndefined();
  });

  it('opens with the provider block only for the model that made it, with its beta header', () => {
    const block = { type: 'compaction', content: 'summary', signature: 'simsig1.x' };
    const native: ActiveRow = {
      ...clip,
      native: {
        compaction: { provider: 'anthropic', model: 'claude-sonnet-4-5', beta: 'compact-2026-09-04', item: block },
        state: 'STATE',
      },
    };
    const same = buildUpstreamBody('anthropic', { model: 'claude-sonnet-4-5', messages: plain }, 0, plain, rows(native));
    const messages = same['messages'] as Array<{ content: unknown[] }>;
    expect(messages[0]?.content[0]).toBe(block);
    expect(same['system']).toBe('STATE');
    expect(withCompactionBeta(same, 'other-beta')).toBe('other-beta,compact-2026-09-04');
    expect(withCompactionBeta(same, 'compact-2026-09-04')).toBe('compact-2026-09-04');
    const other = buildUpstreamBody('anthropic', { model: 'claude-haiku-4-5', messages: plain }, 0, plain, rows(native));
    expect(JSON.stringify(other['messages'])).not.toContain('"compaction"');
    expect(String(other['system'])).toContain('earlier work');
    expect(withCompactionBeta(other, undefined)).toBeUndefined();
  });
});
