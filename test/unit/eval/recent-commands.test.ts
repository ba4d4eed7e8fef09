import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { deriveProbes, scoreProbes } from '../../../eval/probes/index.js';
import { commandName, lastCommands } from '../../../eval/probes/recent.js';
import { type ProbeMessage, transcriptSteps } from '../../../eval/probes/steps.js';
import { extractLedger, renderLedger } from '../../../src/compaction/ledger/index.js';
import { text, toolResult, toolUse } from '../../fixtures/builders.js';
import { loadRealSessions } from '../compaction/ledger/real-sessions.js';

/**
 * The eval's probe for the last commands of a span (its own reading of the transcript), and
 * the ledger's recent actions answering it on every shared real session: two readings of the
 * same transcripts that must agree.
 */

const msg = (role: ProbeMessage['role'], content: string | ProbeMessage['content']): ProbeMessage => ({
  role,
  content: typeof content === 'string' ? [text(content)] : content,
});

describe('lastCommands', () => {
  it('takes the last five distinct commands that ran, oldest first, each by its first line that is not a comment', () => {
    const commands = ['ls', 'npm test', '# rebuild first\nnpm run build\nnpm test', 'ls', 'git status', 'git diff', 'cat x'];
    const span = commands.flatMap((command, i) => [
      msg('assistant', [toolUse(`t${i}`, 'Bash', { command })]),
      msg('user', [toolResult(`t${i}`, 'ok')]),
    ]);
    expect(lastCommands(transcriptSteps(span))).toEqual(['npm run build', 'ls', 'git status', 'git diff', 'cat x']);
    expect(commandName('#   only a comment\n')).toBe('# only a comment');
  });

  it('leaves out what ran no command: a call the user declined, keys sent to a running process, a shell block in a reply', () => {
    const span = [
      msg('assistant', [toolUse('a', 'Bash', { command: 'make' })]),
      msg('user', [toolResult('a', 'ok')]),
      msg('assistant', [toolUse('b', 'Bash', { command: 'rm -rf build' })]),
      msg('user', [toolResult('b', "The user doesn't want to proceed with this tool use. The tool use was rejected.", true)]),
      msg('assistant', [toolUse('c', 'execute_bash', { command: 'C-c', is_input: true })]),
      msg('user', [toolResult('c', '^C')]),
      msg('assistant', 'To publish it yourself:\n\n```bash\nnpm publish\n```'),
      msg('user', 'Thanks.'),
    ];
    expect(lastCommands(transcriptSteps(span))).toEqual(['make']);
  });

  it("reads a Claude Code user's `!` commands as commands", () => {
    const span = [
      msg('user', 'Fix the build.'),
      msg('user', '<bash-input>git log --oneline -3 &amp;&amp; git status</bash-input>'),
      msg('user', '<bash-stdout>abc fix</bash-stdout><bash-stderr>fatal: bad\nExit code 128</bash-stderr>'),
    ];
    const steps = transcriptSteps(span);
    expect(lastCommands(steps)).toEqual(['git log --oneline -3 && git status']);
    expect(steps[0]?.result).toMatchObject({ failed: true, exitCode: 128 });
  });
});

describe('the ledger answers the last-commands probes of every shared real session', () => {
  it('within its default budget, as the clip-archive renders it', () => {
    let total = 0;
    const misses = loadRealSessions().flatMap((session) => {
      const probes = deriveProbes(session.messages).filter((p) => p.kind === 'recent-command');
      total += probes.length;
      const ledger = extractLedger(session.messages);
      const state = renderLedger(ledger, { maxTokens: 1_400, countTokens, escape: 'tags', protectTags: ['compactd'] });
      return scoreProbes(probes, state).missed.map((m) => `${session.name}: ${m.text}`);
    });
    expect(misses).toEqual([]);
    // the Claude Code sessions, the mini-swe-agent runs and the OpenHands fixtures have commands
    expect(total).toBeGreaterThan(60);
  });
});
