import { describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../../harness/transcripts.js';
import { extractLedger, mergeLedgers, renderLedger } from '../../../../src/compaction/ledger/index.js';
import { countTokens, makeMessage, text, toolResult, toolUse } from '../../../fixtures/builders.js';

/** Sub-agents in the state ledger (SPEC §5.6b): each Task/Agent call's task, kind and how it ended, a running one included. */

function session() {
  return [
    makeMessage(1, 'user', 'Find where the tokens are refreshed, then fix the expiry bug.'),
    makeMessage(2, 'assistant', [
      toolUse('t1', 'Task', { description: 'Find token refresh code', prompt: 'Search the repo…', subagent_type: 'Explore' }),
    ]),
    makeMessage(3, 'user', [toolResult('t1', '## Findings\n\nTokens are refreshed in lib/auth/refresh.ex (refresh/1).\nMore details…')]),
    makeMessage(4, 'assistant', [toolUse('t2', 'Task', { description: 'Run the auth test suite', prompt: 'mix test test/auth' })]),
    makeMessage(5, 'user', [toolResult('t2', 'Agent crashed: timeout', true)]),
    makeMessage(6, 'assistant', [text('Starting one more.'), toolUse('t3', 'Agent', { prompt: 'Review the diff for style' })]),
  ];
}

describe('sub-agents in the ledger', () => {
  it('records each sub-agent’s task, kind and first line of its answer; one without an answer is running', () => {
    const { agents } = extractLedger(session());
    expect(agents).toEqual([
      { task: 'Find token refresh code', type: 'Explore', status: 'done', result: 'Findings', seq: 2 },
      { task: 'Run the auth test suite', status: 'failed', result: 'Agent crashed: timeout', seq: 4 },
      { task: 'Review the diff for style', status: 'running', seq: 6 },
    ]);
    const rendered = renderLedger(extractLedger(session()), { maxTokens: 1_000, countTokens });
    expect(rendered).toContain('Sub-agents (newest last):\n- [done] Find token refresh code (Explore) → Findings (seq 2)');
    expect(rendered).toContain('- [running] Review the diff for style (seq 6)');
  });

  it('a split between exchanges merges to the whole span’s ledger', () => {
    const all = session();
    expect(mergeLedgers(extractLedger(all.slice(0, 3)), extractLedger(all.slice(3))).agents).toEqual(extractLedger(all).agents);
  });

  it('a ledger stored before images and sub-agents were kept (read raw, without either) still merges', () => {
    const { images: _images, agents: _agents, ...older } = extractLedger(session().slice(0, 3));
    const merged = mergeLedgers(older as unknown as ReturnType<typeof extractLedger>, extractLedger(session().slice(3)));
    expect(merged.agents.map((a) => a.seq)).toEqual([4, 6]);
    expect(merged.images).toEqual([]);
  });

  it('names the sub-agents of a real Claude Code session', () => {
    const [conversation] = loadRealTranscript('spotter-claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl').conversations;
    const messages = conversation!.messages.map((m, i) => makeMessage(i + 1, m.role, m.content));
    const { agents } = extractLedger(messages);
    expect(agents.map((a) => a.task)).toContain('Explore transcript rendering codebase');
    expect(agents.every((a) => a.status !== 'running' || a.seq === agents.at(-1)?.seq)).toBe(true);
  });
});
