import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { REAL_TRANSCRIPTS_DIR, toolPairingReport } from '../../../harness/transcripts.js';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { findCompactBoundary, importTranscript } from '../../../src/importers/index.js';

/**
 * The Claude Code sessions of the shared set. SOURCES.md estimates "API messages" by merging
 * only consecutive lines; the importer rebuilds them as the provider saw them (every line of
 * one message.id together, the results of parallel calls in the one message after it), so
 * sessions with interleaved parallel calls have fewer messages than that estimate. Tool
 * pairs are SOURCES.md's. `stop` counts up to the compact boundary.
 */
const MAIN_SESSIONS = [
  {
    file: '258c7280-ae70-4798-800f-63464d01a85d.jsonl',
    messages: 307,
    toolPairs: 186,
    boundaryLine: 1256,
    trigger: 'auto',
    stop: { messages: 207, toolPairs: 124 },
  },
  {
    file: '4d5611e5-241a-462a-8d15-5122611a9569.jsonl',
    messages: 280,
    toolPairs: 150,
    boundaryLine: 754,
    trigger: 'auto',
    stop: { messages: 124, toolPairs: 69 },
  },
  {
    file: '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl',
    messages: 287,
    toolPairs: 177,
    boundaryLine: 714,
    trigger: 'auto',
    stop: { messages: 143, toolPairs: 88 },
  },
  {
    file: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
    messages: 439,
    toolPairs: 242,
    boundaryLine: 1481,
    trigger: 'manual',
    stop: { messages: 277, toolPairs: 148 },
  },
] as const;

const OTHER_FILES = [
  { file: '258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl', messages: 6, toolPairs: 2 },
  { file: '4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl', messages: 24, toolPairs: 33 },
  { file: '8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl', messages: 26, toolPairs: 19 },
  { file: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl', messages: 6, toolPairs: 12 },
  // compaction subagents: every line is one message, no tools
  { file: '258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl', messages: 4, toolPairs: 0 },
  { file: '4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-acompact-e1f845.jsonl', messages: 5, toolPairs: 0 },
  { file: '8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl', messages: 7, toolPairs: 0 },
  { file: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-acompact-946d2b.jsonl', messages: 2, toolPairs: 0 },
  { file: 'short.jsonl', messages: 4, toolPairs: 2 },
  { file: 'tool_heavy.jsonl', messages: 15, toolPairs: 6 },
  { file: 'subagent.jsonl', messages: 27, toolPairs: 16 },
] as const;

const texts = new Map<string, string>();
function read(file: string): string {
  let text = texts.get(file);
  if (text === undefined) {
    text = readFileSync(path.join(REAL_TRANSCRIPTS_DIR, 'raw/spotter-claude-code', file), 'utf8');
    texts.set(file, text);
  }
  return text;
}

function importOne(file: string, compactBoundary: 'stop' | 'include') {
  const result = importTranscript(read(file), { fileName: file, compactBoundary });
  expect(result.format).toBe('claude-code');
  expect(result.conversations).toHaveLength(1);
  const [conversation] = result.conversations;
  if (!conversation) throw new Error(`no conversation in ${file}`);
  return conversation;
}

function expectValidPairing(messages: NormalizedMessage[]): void {
  const report = toolPairingReport(messages);
  expect(report.orphanResults).toEqual([]);
  expect(report.duplicateUses).toEqual([]);
  expect(report.onlyFinalPending).toBe(true);
}

function blockTypes(messages: NormalizedMessage[]): Set<string> {
  return new Set(messages.flatMap((m) => m.content.map((b) => b.type)));
}

describe('Claude Code main sessions (real)', () => {
  describe.each(MAIN_SESSIONS)('$file', (session) => {
    it('with include: the API-message and tool-pair counts of SOURCES.md', () => {
      const c = importOne(session.file, 'include');
      expect(c.stats).toMatchObject({
        messages: session.messages,
        toolPairs: session.toolPairs,
        unmatchedToolUses: 0,
        orphanedToolResults: 0,
      });
      expect(c.id).toBe(session.file.replace('.jsonl', ''));
      expectValidPairing(c.messages);
      expect(c.messages.filter((m) => m.metadata?.isCompactSummary === true)).toHaveLength(1);
    });

    it('with stop (the default): only the history before the boundary', () => {
      const c = importOne(session.file, 'stop');
      expect(c.stats).toMatchObject({ messages: session.stop.messages, toolPairs: session.stop.toolPairs, orphanedToolResults: 0 });
      expect(c.stats.messages).toBeLessThan(session.messages);
      expectValidPairing(c.messages);
      expect(c.messages.some((m) => m.metadata?.isCompactSummary === true)).toBe(false);
      expect(c.metadata.compactBoundary).toMatchObject({ lineIndex: session.boundaryLine - 1, trigger: session.trigger });
    });

    it('findCompactBoundary: the boundary line, its trigger and tokens, and Claude Code’s summary', () => {
      const boundary = findCompactBoundary(read(session.file));
      expect(boundary).toMatchObject({ lineIndex: session.boundaryLine - 1, trigger: session.trigger });
      expect(boundary?.preTokens).toBeGreaterThanOrEqual(142_000);
      expect(boundary?.preTokens).toBeLessThanOrEqual(171_000);
      expect(boundary?.summary).toMatch(/^This session is being continued from a previous conversation/);
      expect(boundary?.summary.length).toBeGreaterThan(2_000);
      // The last reply before compacting reported a context just under the size that triggered it.
      const before = importOne(session.file, 'stop').messages.filter((m) => m.usage?.inputTokens !== undefined);
      const lastInput = before.at(-1)?.usage?.inputTokens ?? 0;
      expect(lastInput).toBeLessThanOrEqual(boundary?.preTokens ?? 0);
      expect(lastInput).toBeGreaterThan(0.9 * (boundary?.preTokens ?? 0));
    });

    it('keeps no thinking and no empty message', () => {
      const c = importOne(session.file, 'include');
      expect([...blockTypes(c.messages)].sort()).toEqual(['text', 'tool_result', 'tool_use']);
      expect(c.messages.every((m) => m.content.length > 0)).toBe(true);
    });
  });
});

describe('Claude Code subagent and small sessions (real)', () => {
  it.each(OTHER_FILES)('$file: $messages messages, $toolPairs tool pairs', ({ file, messages, toolPairs }) => {
    for (const mode of ['stop', 'include'] as const) {
      const c = importOne(file, mode);
      expect(c.stats).toMatchObject({ messages, toolPairs, unmatchedToolUses: 0, orphanedToolResults: 0 });
      expectValidPairing(c.messages);
    }
  });

  it('names a subagent conversation after its session and agent', () => {
    expect(importOne('258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl', 'stop').id).toBe(
      '258c7280-ae70-4798-800f-63464d01a85d-agent-a881341',
    );
  });
});
