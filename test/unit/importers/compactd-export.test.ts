import { describe, expect, it } from 'vitest';

import { importTranscript } from '../../../src/importers/index.js';

/** compactd's own export read back (importers/compactd-export.ts): each message as it was appended, clip-archives left out. */

const lines = [
  { seq: 1, role: 'system', kind: 'message', content: [{ type: 'text', text: 'You are a coding agent.' }] },
  {
    seq: 2,
    role: 'user',
    kind: 'message',
    content: [{ type: 'text', text: 'Fix the parser. Never touch mix.lock.' }],
    metadata: { sessionId: 's-1' },
    pinned: true,
  },
  {
    seq: 3,
    role: 'assistant',
    kind: 'message',
    name: 'coder',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'mix test' } }],
    usage: { inputTokens: 1200, outputTokens: 40 },
  },
  { seq: 4, role: 'user', kind: 'message', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 tests, 1 failure' }] },
  {
    seq: 5,
    role: 'user',
    kind: 'message',
    content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }],
    metadata: { meta: true },
  },
  { seq: 6, role: 'system', kind: 'clip_archive', content: [{ type: 'text', text: '<compactd-archive>…</compactd-archive>' }] },
];
const text = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

describe('importing compactd’s export', () => {
  it('is detected, and gives back every message with its name, metadata, usage and pin; the clip-archive is not a message', () => {
    const { format, conversations } = importTranscript(text);
    expect(format).toBe('compactd-export');
    const [conversation] = conversations;
    expect(conversation!.stats.droppedLines).toBe(1);
    expect(conversation!.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'You are a coding agent.' }] },
      {
        role: 'user',
        content: [{ type: 'text', text: 'Fix the parser. Never touch mix.lock.' }],
        metadata: { sessionId: 's-1' },
        pinned: true,
      },
      {
        role: 'assistant',
        name: 'coder',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'mix test' } }],
        usage: { inputTokens: 1200, outputTokens: 40 },
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 tests, 1 failure' }] },
      { role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }], metadata: { meta: true } },
    ]);
  });
});
