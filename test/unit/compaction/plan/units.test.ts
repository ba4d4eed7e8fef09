import { describe, expect, it } from 'vitest';

import { groupUnits } from '../../../../src/compaction/plan/units.js';
import { conversation, makeMessage, text, toolResult, toolUse } from '../../../fixtures/builders.js';

const shape = (messages: Parameters<typeof groupUnits>[0]) =>
  groupUnits(messages).map((u) => ({ kind: u.kind, seqs: u.seqs, pending: u.pending }));

describe('groupUnits', () => {
  const cases = [
    {
      name: 'lone messages are one unit each',
      messages: conversation().system('sys').user('hi').assistant('hello').build(),
      expected: [
        { kind: 'message', seqs: [1], pending: false },
        { kind: 'message', seqs: [2], pending: false },
        { kind: 'message', seqs: [3], pending: false },
      ],
    },
    {
      name: 'a call and its result form one exchange',
      messages: conversation().user('read it').exchange('t1', 'Read', { file_path: '/a.ts' }, 'content').assistant('done').build(),
      expected: [
        { kind: 'message', seqs: [1], pending: false },
        { kind: 'tool_exchange', seqs: [2, 3], pending: false },
        { kind: 'message', seqs: [4], pending: false },
      ],
    },
    {
      name: 'parallel calls answered in several messages, OpenAI role tool',
      messages: conversation()
        .user('go')
        .calls([
          { id: 'a', name: 'Bash' },
          { id: 'b', name: 'Read' },
          { id: 'c', name: 'Grep' },
        ])
        .results([{ id: 'b', output: 'B' }], 'tool')
        .results([{ id: 'a', output: 'A' }], 'tool')
        .results([{ id: 'c', output: 'C' }], 'tool')
        .assistant('ok')
        .build(),
      expected: [
        { kind: 'message', seqs: [1], pending: false },
        { kind: 'tool_exchange', seqs: [2, 3, 4, 5], pending: false },
        { kind: 'message', seqs: [6], pending: false },
      ],
    },
    {
      name: 'a message between a call and its late result is absorbed (units stay contiguous)',
      messages: conversation()
        .calls([{ id: 'a', name: 'Bash' }])
        .user('meanwhile, also check the logs')
        .results([{ id: 'a', output: 'A' }])
        .build(),
      expected: [{ kind: 'tool_exchange', seqs: [1, 2, 3], pending: false }],
    },
    {
      name: 'overlapping exchanges merge into one unit',
      messages: conversation()
        .calls([{ id: 'a', name: 'Bash' }])
        .calls([{ id: 'b', name: 'Bash' }])
        .results([{ id: 'a', output: 'A' }])
        .results([{ id: 'b', output: 'B' }])
        .build(),
      expected: [{ kind: 'tool_exchange', seqs: [1, 2, 3, 4], pending: false }],
    },
    {
      name: 'trailing calls without results are pending',
      messages: conversation()
        .user('go')
        .calls([{ id: 'a', name: 'Bash' }])
        .build(),
      expected: [
        { kind: 'message', seqs: [1], pending: false },
        { kind: 'tool_exchange', seqs: [2], pending: true },
      ],
    },
    {
      name: 'a trailing exchange with only some results in is still pending',
      messages: conversation()
        .calls([
          { id: 'a', name: 'Bash' },
          { id: 'b', name: 'Bash' },
        ])
        .results([{ id: 'a', output: 'A' }])
        .build(),
      expected: [{ kind: 'tool_exchange', seqs: [1, 2], pending: true }],
    },
    {
      name: 'an unanswered call in the middle is not pending (the conversation moved on)',
      messages: conversation()
        .calls([{ id: 'a', name: 'Bash' }])
        .user('never mind')
        .build(),
      expected: [
        { kind: 'tool_exchange', seqs: [1], pending: false },
        { kind: 'message', seqs: [2], pending: false },
      ],
    },
    {
      name: 'a result whose call is not in the history is an orphan unit of its own',
      messages: conversation()
        .results([{ id: 'gone', output: 'old' }])
        .user('next')
        .build(),
      expected: [
        { kind: 'orphan_result', seqs: [1], pending: false },
        { kind: 'message', seqs: [2], pending: false },
      ],
    },
    {
      name: 'the clip-archive is its own unit',
      messages: conversation().system('sys').clipArchive('summary').user('hi').build(),
      expected: [
        { kind: 'message', seqs: [1], pending: false },
        { kind: 'clip_archive', seqs: [2], pending: false },
        { kind: 'message', seqs: [3], pending: false },
      ],
    },
  ];

  it.each(cases)('$name', ({ messages, expected }) => {
    expect(shape(messages)).toEqual(expected);
  });

  it('handles Anthropic user messages mixing tool results and text', () => {
    const messages = [
      makeMessage(1, 'assistant', [text('checking'), toolUse('x', 'Read', { file_path: '/a' })]),
      makeMessage(2, 'user', [toolResult('x', 'file'), text('thanks, now fix it')]),
    ];
    expect(shape(messages)).toEqual([{ kind: 'tool_exchange', seqs: [1, 2], pending: false }]);
  });

  it('sums tokens and records unanswered ids', () => {
    const messages = conversation()
      .calls([
        { id: 'a', name: 'Bash' },
        { id: 'b', name: 'Bash' },
      ])
      .results([{ id: 'a', output: 'x' }])
      .build();
    const [unit] = groupUnits(messages);
    expect(unit?.tokens).toBe(messages.reduce((s, m) => s + m.tokens, 0));
    expect(unit?.unansweredIds).toEqual(['b']);
  });
});

describe('groupUnits memory', () => {
  it('gives every unit without an unanswered call one shared, frozen empty list, and a list of its own to one with', () => {
    const messages = [
      makeMessage(1, 'user', 'a'),
      makeMessage(2, 'assistant', 'b'),
      makeMessage(3, 'assistant', [toolUse('t1', 'read', {}), toolUse('t2', 'read', {})]),
      makeMessage(4, 'user', [toolResult('t1', 'x')]),
      makeMessage(5, 'user', 'c'),
    ];
    const units = groupUnits(messages);
    const answered = units.filter((u) => u.unansweredIds.length === 0);
    expect(answered.length).toBeGreaterThanOrEqual(3);
    expect(new Set(answered.map((u) => u.unansweredIds)).size).toBe(1);
    expect(Object.isFrozen(answered[0]?.unansweredIds)).toBe(true);
    const open = units.find((u) => u.unansweredIds.length > 0);
    expect(open?.unansweredIds).toEqual(['t2']);
    expect(open?.seqs).toEqual([3, 4]);
    expect(open?.tokens).toBe(messages[2]!.tokens + messages[3]!.tokens);
  });
});
