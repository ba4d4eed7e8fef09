import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { listRealTranscripts, loadRealTranscript, toolPairingReport } from '../../../harness/transcripts.js';
import { detectTranscriptFormat } from '../../../src/importers/index.js';

describe('the shared set', () => {
  it('lists the 24 transcript files (SOURCES.md), each detected as its collection’s format', () => {
    const files = listRealTranscripts();
    expect(files).toHaveLength(24);
    expect(files.filter((f) => f.format === 'claude-code')).toHaveLength(15);
    for (const file of files) expect(detectTranscriptFormat(readFileSync(file.path, 'utf8'), file.name), file.name).toBe(file.format);
  });
});

describe('τ-bench airline trajectories (real, OpenAI tool_calls)', () => {
  const result = loadRealTranscript('tau-bench/gpt-4o-airline.json');
  const conversations = result.conversations;

  it('imports 200 conversations named task-<id>-trial-<n>, 50 tasks × 4 trials', () => {
    expect(result.format).toBe('tau-bench');
    expect(conversations).toHaveLength(200);
    const ids = new Set(conversations.map((c) => c.id));
    expect(ids.size).toBe(200);
    for (let task = 0; task < 50; task++) for (let trial = 0; trial < 4; trial++) expect(ids.has(`task-${task}-trial-${trial}`)).toBe(true);
  });

  it('has 1164 assistant tool-call messages, each matched with its tool result', () => {
    const toolCallMessages = conversations
      .flatMap((c) => c.messages)
      .filter((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use'));
    expect(toolCallMessages).toHaveLength(1164);
    expect(conversations.reduce((sum, c) => sum + c.stats.toolPairs, 0)).toBe(1164);
    for (const c of conversations) {
      expect(c.stats.unmatchedToolUses, c.id).toBe(0);
      const report = toolPairingReport(c.messages);
      expect(report.orphanResults, c.id).toEqual([]);
      expect(report.duplicateUses, c.id).toEqual([]);
    }
  });

  it('renames the call ids the recorded runs reuse, so each call keeps its own result', () => {
    const renamed = conversations.reduce((sum, c) => sum + c.stats.renamedToolUseIds, 0);
    expect(renamed).toBeGreaterThan(0);
    const task0 = conversations.find((c) => c.id === 'task-0-trial-0');
    const calls = task0?.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []))) ?? [];
    const results = task0?.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_result' ? [b] : []))) ?? [];
    expect(results.map((r) => r.tool_use_id)).toEqual(calls.map((c) => c.id));
  });

  it('keeps every message: 6–62 per trajectory, median 24, 28 with 40 or more (SOURCES.md)', () => {
    const lengths = conversations.map((c) => c.stats.messages).sort((a, b) => a - b);
    expect(lengths[0]).toBe(6);
    expect(lengths.at(-1)).toBe(62);
    expect(((lengths[99] ?? 0) + (lengths[100] ?? 0)) / 2).toBe(24);
    expect(lengths.filter((n) => n >= 40)).toHaveLength(28);
    expect(conversations.every((c) => c.messages[0]?.role === 'system')).toBe(true);
    expect(conversations.find((c) => c.id === 'task-0-trial-0')?.metadata).toMatchObject({ taskId: 0, trial: 0 });
  });
});

describe('mini-swe-agent SWE-bench trajectories (real, text actions)', () => {
  const TRAJECTORIES = [
    { id: 'django__django-16560', messages: 292 },
    { id: 'sphinx-doc__sphinx-9229', messages: 286 },
    { id: 'sympy__sympy-19040', messages: 266 },
    { id: 'pylint-dev__pylint-6528', messages: 196 },
    { id: 'pytest-dev__pytest-7490', messages: 196 },
    { id: 'matplotlib__matplotlib-25775', messages: 192 },
    { id: 'pydata__xarray-4687', messages: 130 },
    { id: 'psf__requests-6028', messages: 100 },
  ];

  it.each(TRAJECTORIES)('$id: $messages messages, roles kept, no tool blocks', ({ id, messages }) => {
    const result = loadRealTranscript(`mini-swe-agent-gemini3pro-swebench/${id}/${id}.traj.json`);
    expect(result.format).toBe('mini-swe-agent');
    const [c] = result.conversations;
    expect(c?.id).toBe(id);
    expect(c?.stats).toMatchObject({ messages, toolPairs: 0, unmatchedToolUses: 0, droppedLines: 0 });
    const roles = c?.messages.map((m) => m.role) ?? [];
    expect(roles.slice(0, 2)).toEqual(['system', 'user']);
    // after the task, assistant action and user observation alternate
    roles.slice(2).forEach((role, i) => expect(role).toBe(i % 2 === 0 ? 'assistant' : 'user'));
    expect(c?.messages.every((m) => m.content.every((b) => b.type === 'text'))).toBe(true);
    expect(c?.metadata).toMatchObject({ instanceId: id, exitStatus: 'Submitted' });
  });

  it('django__django-16560: 1 system, 146 user, 145 assistant (SOURCES.md)', () => {
    const [c] = loadRealTranscript('mini-swe-agent-gemini3pro-swebench/django__django-16560/django__django-16560.traj.json').conversations;
    const count = (role: string) => c?.messages.filter((m) => m.role === role).length;
    expect([count('system'), count('user'), count('assistant')]).toEqual([1, 146, 145]);
  });
});
