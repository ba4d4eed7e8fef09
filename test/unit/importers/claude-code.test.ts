import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { providerPairingViolations, SAMPLE_CLAUDE_CODE_SESSION, toolPairingReport } from '../../../harness/transcripts.js';
import { MISSING_RESULT_TEXT } from '../../../src/importers/claude-code-turns.js';
import { detectTranscriptFormat, findCompactBoundary, importTranscript, TranscriptImportError } from '../../../src/importers/index.js';
import { block, jsonl, line } from './claude-code-lines.js';

function importOne(lines: unknown[], options: Parameters<typeof importTranscript>[1] = {}) {
  const result = importTranscript(jsonl(lines), { format: 'claude-code', ...options });
  expect(result.conversations).toHaveLength(1);
  const [conversation] = result.conversations;
  if (!conversation) throw new Error('no conversation');
  return conversation;
}

function caught(fn: () => unknown): TranscriptImportError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TranscriptImportError) return err;
    throw err;
  }
  throw new Error('expected a TranscriptImportError');
}

describe('Claude Code importer: merging', () => {
  it('merges consecutive one-block lines of one message.id, across dropped progress lines, and drops thinking', () => {
    const c = importOne([
      line.snapshot(),
      line.user('why does the build fail?'),
      line.assistant('msg_A', block.text('\n\n')),
      line.assistant('msg_A', block.thinking('maybe the lockfile')),
      line.assistant('msg_A', block.text('Let me look.')),
      line.assistant('msg_A', block.toolUse('tu_1', 'Bash', { command: 'npm run build' })),
      line.progress(),
      line.assistant('msg_A', block.toolUse('tu_2', 'Read', { file_path: '/app/package.json' })),
      line.result('tu_1', 'exit 1'),
      line.result('tu_2', '{ "name": "app" }'),
    ]);
    expect(c.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(c.messages[1]?.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'npm run build' } },
      { type: 'tool_use', id: 'tu_2', name: 'Read', input: { file_path: '/app/package.json' } },
    ]);
    expect(c.messages[2]?.content.map((b) => b.type)).toEqual(['tool_result', 'tool_result']);
    // snapshot, progress, and the two lines left empty (thinking, whitespace text)
    expect(c.stats).toMatchObject({ messages: 3, toolPairs: 2, unmatchedToolUses: 0, droppedLines: 4, orphanedToolResults: 0 });
  });

  it('joins the lines of one message.id whatever lies between them, and puts every result right after its call', () => {
    const c = importOne([
      line.user('go'),
      line.assistant('msg_A', block.toolUse('tu_1', 'Bash')),
      line.result('tu_1', 'ok 1'),
      line.assistant('msg_A', block.toolUse('tu_2', 'Bash')),
      line.progress(),
      line.assistant('msg_B', block.text('both done')),
      line.result('tu_2', 'ok 2'),
    ]);
    expect(c.messages.map((m) => m.content.map((b) => (b.type === 'tool_result' ? `result:${b.tool_use_id}` : b.type)).join('+'))).toEqual([
      'text',
      'tool_use+tool_use',
      'result:tu_1+result:tu_2',
      'text',
    ]);
    expect(providerPairingViolations(c.messages)).toEqual([]);
    expect(c.stats).toMatchObject({ messages: 4, toolPairs: 2, duplicateToolResults: 0, synthesizedToolResults: 0 });
  });

  it('answers the calls in call order, before what the user said while they ran', () => {
    const c = importOne([
      line.assistant('msg_A', block.toolUse('tu_1', 'Read')),
      line.assistant('msg_A', block.toolUse('tu_2', 'Read')),
      line.result('tu_2', 'second'),
      line.user('also check the tests', { isMeta: true }),
      line.result('tu_1', 'first'),
    ]);
    expect(c.messages[1]?.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type))).toEqual(['tu_1', 'tu_2']);
    expect(c.messages[2]?.content).toEqual([{ type: 'text', text: 'also check the tests' }]);
    expect(c.messages[2]?.metadata).toMatchObject({ isMeta: true });
  });

  it('drops a second result for one call and answers a call the file never answered with an error result', () => {
    const c = importOne([
      line.assistant('msg_A', block.toolUse('tu_1', 'Bash')),
      line.assistant('msg_A', block.toolUse('tu_2', 'Bash')),
      line.result('tu_1', 'done'),
      line.result('tu_1', 'done again'),
      line.user('[Request interrupted by user]'),
    ]);
    expect(c.messages[1]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'tu_1', content: 'done' },
      { type: 'tool_result', tool_use_id: 'tu_2', content: MISSING_RESULT_TEXT, is_error: true },
    ]);
    expect(c.stats).toMatchObject({ duplicateToolResults: 1, synthesizedToolResults: 1, toolPairs: 2, unmatchedToolUses: 0 });
    expect(providerPairingViolations(c.messages)).toEqual([]);
  });

  it('leaves the calls of a last reply pending when none is answered yet', () => {
    const c = importOne([line.user('go'), line.assistant('msg_A', block.toolUse('tu_1', 'Bash'))]);
    expect(c.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(c.stats).toMatchObject({ unmatchedToolUses: 1, synthesizedToolResults: 0 });
  });

  it('takes the session model from its last main-chain reply, not from a subagent or a synthetic reply', () => {
    const c = importOne(
      [
        line.user('go'),
        line.assistant('msg_A', block.text('on haiku'), {
          message: { id: 'msg_A', role: 'assistant', model: 'claude-haiku-4-5', content: [block.text('on haiku')] },
        }),
        line.assistant('msg_B', block.text('on opus')),
        line.assistant('msg_C', block.text('sub'), {
          isSidechain: true,
          message: { id: 'msg_C', role: 'assistant', model: 'claude-sonnet-4-5', content: [block.text('sub')] },
        }),
        line.assistant('msg_D', block.text('API Error'), {
          message: { id: 'msg_D', role: 'assistant', model: '<synthetic>', content: [block.text('API Error')] },
        }),
      ],
      { includeSidechains: true },
    );
    expect(c.model).toBe('claude-opus-4-6');
  });

  it('keeps a user text line after tool results as its own message', () => {
    const c = importOne([
      line.user('edit it'),
      line.assistant('msg_A', block.toolUse('tu_1', 'Edit')),
      line.result('tu_1', 'rejected'),
      line.user([block.text('[Request interrupted by user for tool use]')]),
    ]);
    expect(c.messages.map((m) => m.content.map((b) => b.type).join('+'))).toEqual(['text', 'tool_use', 'tool_result', 'text']);
  });

  it('drops progress, system, snapshot and queue lines and counts them', () => {
    const c = importOne([
      line.snapshot(),
      line.queue(),
      line.progress(),
      line.user('hi'),
      line.system('turn_duration'),
      line.assistant('msg_A', block.text('hello')),
      line.system('stop_hook_summary'),
    ]);
    expect(c.messages).toHaveLength(2);
    expect(c.stats.droppedLines).toBe(5);
  });

  it('takes the final usage snapshot of a reply, counting cached input as context', () => {
    const usage = (out: number) => ({
      input_tokens: 3,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 5000,
      output_tokens: out,
    });
    const a1 = line.assistant('msg_A', block.text('a'));
    const a2 = line.assistant('msg_A', block.text('b'));
    (a1.message as Record<string, unknown>).usage = usage(2);
    (a2.message as Record<string, unknown>).usage = usage(40);
    const c = importOne([line.user('q'), a1, a2]);
    expect(c.messages[1]?.usage).toEqual({ inputTokens: 5103, outputTokens: 40 });
    expect(c.messages[1]?.metadata).toMatchObject({ model: 'claude-opus-4-6' });
  });

  it('turns a result whose call is not in the file into text and reports a pending final call', () => {
    const c = importOne([line.result('tu_gone', 'output of an earlier session'), line.assistant('msg_A', block.toolUse('tu_1', 'Bash'))]);
    expect(c.messages[0]?.content).toEqual([
      { type: 'text', text: '[result of tool call tu_gone, whose call is not in this transcript]\noutput of an earlier session' },
    ]);
    expect(c.stats).toMatchObject({ orphanedToolResults: 1, unmatchedToolUses: 1, toolPairs: 0 });
    expect(toolPairingReport(c.messages)).toMatchObject({ orphanResults: [], onlyFinalPending: true });
  });

  it('keeps an unknown block type as text instead of losing it', () => {
    const c = importOne([line.user([{ type: 'document', source: { type: 'text', data: 'spec' } }])]);
    expect(c.messages[0]?.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('[document block]') as unknown });
  });
});

describe('Claude Code importer: sidechains', () => {
  const lines = [
    line.user('research the hooks API'),
    line.assistant('msg_A', block.toolUse('tu_task', 'Task', { prompt: 'find hook docs' })),
    line.user('find hook docs', { isSidechain: true, agentId: 'a1' }),
    line.assistant('msg_S', block.text('Hooks print JSON to stdout.'), { isSidechain: true, agentId: 'a1' }),
    line.result('tu_task', 'Hooks print JSON to stdout.'),
  ];

  it('excludes sidechain lines of a main session by default', () => {
    const c = importOne(lines);
    expect(c.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(c.stats.droppedLines).toBe(2);
    expect(c.id).toBe('sess-0001');
  });

  it('includes them in file order when asked, the Task result still right after its call', () => {
    const c = importOne(lines, { includeSidechains: true });
    expect(c.messages.map((m) => `${m.role}:${m.content[0]?.type}`)).toEqual([
      'user:text',
      'assistant:tool_use',
      'user:tool_result',
      'user:text',
      'assistant:text',
    ]);
    expect(providerPairingViolations(c.messages)).toEqual([]);
  });

  it('imports a subagent file (sidechain only) whole, named after session and agent', () => {
    const c = importOne(lines.slice(2, 4));
    expect(c.messages).toHaveLength(2);
    expect(c.id).toBe('sess-0001-agent-a1');
    expect(importOne(lines.slice(2, 4), { includeSidechains: false }).messages).toHaveLength(0);
  });
});

describe('Claude Code importer: compact boundary', () => {
  const summary = 'This session is being continued from a previous conversation. Summary: fixed the build.';
  const lines = [
    line.user('fix the build'),
    line.assistant('msg_A', block.text('Fixed.')),
    line.boundary('auto', 155000),
    line.user(summary, { isCompactSummary: true }),
    line.user('now the tests'),
    line.assistant('msg_B', block.text('On it.')),
  ];

  it('stops at the boundary by default', () => {
    const c = importOne(lines);
    expect(c.messages.map((m) => m.content[0])).toEqual([block.text('fix the build'), block.text('Fixed.')]);
    expect(c.metadata.compactBoundary).toEqual({ lineIndex: 2, preTokens: 155000, trigger: 'auto' });
  });

  it('goes on past it with include, keeping the summary message', () => {
    const c = importOne(lines, { compactBoundary: 'include' });
    expect(c.messages).toHaveLength(5);
    expect(c.messages[2]).toMatchObject({ role: 'user', content: [{ type: 'text', text: summary }], metadata: { isCompactSummary: true } });
  });

  it('findCompactBoundary reports line index, tokens, trigger and summary', () => {
    expect(findCompactBoundary(jsonl(lines))).toEqual({ lineIndex: 2, preTokens: 155000, trigger: 'auto', summary });
    expect(findCompactBoundary(jsonl([line.user('hi')]))).toBeNull();
  });
});

describe('Claude Code importer: errors', () => {
  it('names the line of malformed JSON', () => {
    const text = `${JSON.stringify(line.user('a'))}\n${JSON.stringify(line.progress())}\n{"type":"user", "message": \n`;
    const err = caught(() => importTranscript(text));
    expect(err.code).toBe('TRANSCRIPT_PARSE_ERROR');
    expect(err.line).toBe(3);
    expect(err.message).toMatch(/^line 3: invalid JSON/);
  });

  it('names the line of an entry without a message', () => {
    const err = caught(() => importOne([line.user('a'), { type: 'assistant', uuid: 'x', sessionId: 's' }]));
    expect(err).toMatchObject({ code: 'TRANSCRIPT_INVALID', line: 2 });
    expect(err.message).toContain('line 2: assistant entry: message');
  });

  it('names the line of a block that fails ingestion validation', () => {
    const bad = line.assistant('msg_A', { type: 'tool_use', name: 'Bash', input: {} });
    const err = caught(() => importOne([line.user('a'), line.progress(), bad]));
    expect(err).toMatchObject({ code: 'TRANSCRIPT_INVALID', line: 3 });
    expect(err.message).toMatch(/^line 3: content: /);
    expect(err.details?.[0]?.field).toBe('messages.1.content');
  });

  it('rejects NUL characters as the API does, naming the line', () => {
    const err = caught(() => importOne([line.user('a\u0000b')]));
    expect(err).toMatchObject({ code: 'TRANSCRIPT_INVALID', line: 1 });
    expect(err.message).toContain('NUL');
  });
});

describe('the sample session shipped for the demo', () => {
  const text = readFileSync(SAMPLE_CLAUDE_CODE_SESSION, 'utf8');

  it('is a Claude Code session that imports into a valid history', () => {
    expect(detectTranscriptFormat(text, 'sample-claude-code.jsonl')).toBe('claude-code');
    const [c] = importTranscript(text).conversations;
    expect(c?.stats).toMatchObject({ messages: 22, toolPairs: 9, unmatchedToolUses: 0, orphanedToolResults: 0 });
    expect(toolPairingReport(c?.messages ?? [])).toMatchObject({ orphanResults: [], unanswered: [], duplicateUses: [] });
    expect(c?.messages.every((m) => m.content.every((b) => b.type !== ('thinking' as string)))).toBe(true);
  });
});
