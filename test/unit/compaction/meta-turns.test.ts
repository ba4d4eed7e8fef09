import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { buildChunkHeader } from '../../../src/compaction/context/header.js';
import { parseSections, summarizeLocally } from '../../../src/compaction/local/local-summarizer.js';
import {
  INTERRUPTION_NOTICES,
  isMetaContent,
  isMetaText,
  isMetaTurn,
  markMetaTurn,
  META_TURN_MARKER,
  META_WRAPPER_TAGS,
} from '../../../src/compaction/meta-turns.js';
import { planCompaction } from '../../../src/compaction/plan/plan.js';
import { isUserTextMessage } from '../../../src/compaction/render.js';
import { buildSummarizeRequest } from '../../../src/compaction/summarize/prompt.js';
import { readRequest } from '../../../src/compaction/summarize/read-request.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { conversation, countTokens, makeSnapshot } from '../../fixtures/builders.js';

/** Wrappers as Claude Code writes them (taken from the shared sessions' shapes). */
const TASK_NOTIFICATION =
  '<task-notification>\n<task-id>b0be39e</task-id>\n<output-file>/tmp/claude-1000/tasks/b0be39e.output</output-file>\n<status>completed</status>\n' +
  '<summary>Background command "Run resource tests" completed (exit code 0)</summary>\n</task-notification>\n' +
  'Read the output file to retrieve the result: /tmp/claude-1000/tasks/b0be39e.output';
const SLASH_COMMAND =
  '<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args>and continue</command-args>';
const COMMAND_OUTPUT = '<local-command-stdout>Reconnected to tidewave.</local-command-stdout>';
const REMINDER = '<system-reminder>\nPostToolUse:Edit hook additional context: [CREDO]\n</system-reminder>';
const REQUEST = 'Make the importer keep the model’s own tool calls, and never drop an error detail.';

const policy = mergePolicy();

function withMetaFlag(messages: HistoryMessage[], seqs: number[]): HistoryMessage[] {
  return messages.map((m) => (seqs.includes(m.seq) ? { ...m, meta: true } : m));
}

describe('meta turns are recognized by their wrappers', () => {
  it.each([
    TASK_NOTIFICATION,
    SLASH_COMMAND,
    COMMAND_OUTPUT,
    REMINDER,
    `  \n${REMINDER}`,
    '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n</output>',
    ...INTERRUPTION_NOTICES,
    '[Request interrupted by user]\n',
  ])('%#: a wrapper or an interruption notice is meta text', (text) => {
    expect(isMetaText(text)).toBe(true);
    expect(isMetaContent('user', [{ type: 'text', text }])).toBe(true);
  });

  it('a typed request, a request beside a reminder, a wrapper quoted mid-text and non-user roles are not meta', () => {
    expect(isMetaContent('user', [{ type: 'text', text: REQUEST }])).toBe(false);
    expect(
      isMetaContent('user', [
        { type: 'text', text: REMINDER },
        { type: 'text', text: REQUEST },
      ]),
    ).toBe(false);
    expect(isMetaContent('user', [{ type: 'text', text: `please read ${COMMAND_OUTPUT}` }])).toBe(false);
    expect(isMetaContent('user', [{ type: 'text', text: '[Request interrupted by user] now fix the parser instead' }])).toBe(false);
    expect(isMetaContent('assistant', [{ type: 'text', text: REMINDER }])).toBe(false);
    expect(isMetaContent('user', [{ type: 'tool_result', tool_use_id: 't', content: REMINDER }])).toBe(false);
  });

  it('markMetaTurn sets metadata.meta, keeps the content and other metadata, and an explicit flag wins', () => {
    const marked = markMetaTurn({
      role: 'user' as const,
      content: [{ type: 'text' as const, text: SLASH_COMMAND }],
      metadata: { uuid: 'u1' },
    });
    expect(marked).toEqual({ role: 'user', content: [{ type: 'text', text: SLASH_COMMAND }], metadata: { uuid: 'u1', meta: true } });
    const typed = { role: 'user' as const, content: [{ type: 'text' as const, text: SLASH_COMMAND }], metadata: { meta: false } };
    expect(markMetaTurn(typed)).toBe(typed);
    expect(isMetaTurn(typed)).toBe(false);
    expect(isMetaTurn({ role: 'user', content: [{ type: 'text', text: 'Added workspace context' }], metadata: { meta: true } })).toBe(true);
  });

  it('property: marking only ever adds meta: true to a user turn whose texts all open with a wrapper', () => {
    const wrapper = fc.constantFrom(...META_WRAPPER_TAGS).map((tag) => `<${tag}>`);
    const textArb = fc.oneof(
      fc.string(),
      fc.tuple(wrapper, fc.string()).map(([open, rest]) => open + rest),
    );
    const messageArb = fc.record({
      role: fc.constantFrom('user' as const, 'assistant' as const, 'system' as const),
      content: fc.array(
        textArb.map((t) => ({ type: 'text' as const, text: t })),
        { maxLength: 4 },
      ),
    });
    fc.assert(
      fc.property(messageArb, (message) => {
        const marked: { content: unknown; metadata?: Record<string, unknown> } = markMetaTurn(message);
        expect(marked.content).toEqual(message.content);
        const texts = message.content.map((b) => b.text).filter((t) => t.trim() !== '');
        const expected =
          message.role === 'user' &&
          texts.length > 0 &&
          texts.every((t) => (/^\s*<[a-z-]+>/.test(t) && isMetaText(t)) || (INTERRUPTION_NOTICES as readonly string[]).includes(t.trim()));
        expect(marked.metadata?.['meta'] === true).toBe(expected);
      }),
    );
  });
});

describe('meta turns are never the user’s request', () => {
  const history = conversation()
    .user(REQUEST)
    .exchange('t1', 'Bash', { command: 'npm test' }, 'ok')
    .user(TASK_NOTIFICATION)
    .user(SLASH_COMMAND)
    .user(COMMAND_OUTPUT)
    .user('Added workspace context') // an environment event an importer flagged (metadata.meta)
    .build();
  const flagged = withMetaFlag(history, [history.at(-1)?.seq ?? 0]);

  it('isUserTextMessage skips them (wrappers by text, flagged turns by the flag)', () => {
    expect(flagged.filter(isUserTextMessage).map((m) => m.seq)).toEqual([1]);
  });

  it('a wrapper the client marked meta: false stays a request', () => {
    const kept = flagged.map((m) => (m.seq === 4 ? { ...m, meta: false } : m));
    expect(kept.filter(isUserTextMessage).map((m) => m.seq)).toEqual([1, 4]);
  });

  it('the prompt header names the typed request', () => {
    const header = buildChunkHeader(flagged, [], countTokens) ?? '';
    expect(header).toContain(REQUEST);
    expect(header).not.toContain('task-notification');
    expect(header).not.toContain('Added workspace context');
  });

  it('the local summarizer reports the typed request as the latest, never a wrapper or a flagged turn', () => {
    const summary = summarizeLocally(buildSummarizeRequest(flagged, null, policy), { countTokens, maxTokens: 2_000 });
    const taskState = parseSections(summary).get('TASK STATE') ?? [];
    expect(taskState.find((line) => line.startsWith('Latest request:'))).toBe(`Latest request: ${REQUEST}`);
    expect(taskState.filter((line) => /request:/.test(line))).toHaveLength(1);
  });

  it('a flagged turn reaches the summarizer verbatim, after a marker line saying what it is', () => {
    // the turns as the summarizer reads them back out of the request's fence
    const turns = readRequest(buildSummarizeRequest(flagged, null, policy).messages).body;
    expect(turns.some((m) => m.content === `${META_TURN_MARKER}\nAdded workspace context`)).toBe(true);
    expect(turns.some((m) => m.content === TASK_NOTIFICATION)).toBe(true);
  });

  it('reset pins the typed request, not a later meta turn', () => {
    const messages = conversation()
      .system('You are an agent.')
      .user(REQUEST)
      .exchange('t1', 'Bash', { command: 'npm test' }, 'x'.repeat(4_000))
      .assistant('Working on it.')
      .exchange('t2', 'Bash', { command: 'npm run lint' }, 'y'.repeat(4_000))
      .user(TASK_NOTIFICATION)
      .build();
    const result = planCompaction(makeSnapshot(messages, 100_000), policy, { strategy: 'reset', trigger: 'api' }, countTokens);
    if (result.kind !== 'plan') throw new Error(`expected a plan, got ${result.kind}`);
    const compacted = new Set(result.compressedSeqs);
    expect(compacted.has(2)).toBe(false);
    expect(compacted.has(messages.at(-1)?.seq ?? 0)).toBe(true);
  });
});
