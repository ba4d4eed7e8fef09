import { countTokens as o200kTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { emptyLedger, extractLedger, type Ledger, renderLedger } from '../../../../src/compaction/ledger/index.js';
import { conversation, countTokens, makeMessage, toolResult, toolUse } from '../../../fixtures/builders.js';
import { loadRealSessions } from './real-sessions.js';

/** The last commands and files of a span, read from every harness's shell tools, rendered as the state's recent actions. */

const recent = (ledger: Ledger, n = 5) =>
  [...ledger.commands]
    .sort((a, b) => a.lastSeq - b.lastSeq || (a.lastAt ?? 0) - (b.lastAt ?? 0))
    .slice(-n)
    .map((c) => c.line);

function recentPart(rendered: string): string {
  const lines = rendered.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Recent actions'));
  return start === -1 ? '' : lines.slice(start).join('\n');
}

describe('extractLedger: commands of every harness', () => {
  it('keeps the order calls of one message ran in', () => {
    const messages = [
      makeMessage(1, 'assistant', [toolUse('a', 'Bash', { command: 'mix test' }), toolUse('b', 'Bash', { command: 'mix credo --strict' })]),
      makeMessage(2, 'user', [toolResult('a', 'ok'), toolResult('b', 'ok')]),
      makeMessage(3, 'assistant', [toolUse('c', 'Bash', { command: 'git status' }), toolUse('d', 'Bash', { command: 'mix test' })]),
      makeMessage(4, 'user', [toolResult('c', 'clean'), toolResult('d', 'ok')]),
    ];
    const ledger = extractLedger(messages);
    expect(recent(ledger)).toEqual(['mix credo --strict', 'git status', 'mix test']);
    expect(ledger.commands.find((c) => c.line === 'mix test')).toMatchObject({ lastSeq: 3, lastAt: 1, count: 2 });
  });

  it("reads a Claude Code user's `!` commands (output in the same turn or the next), never as the user's words", () => {
    const messages = conversation()
      .user('Fix the flaky test.')
      .user('<bash-input>git status</bash-input>')
      .user('<bash-stdout>On branch main\nnothing to commit</bash-stdout><bash-stderr></bash-stderr>')
      .user(
        '<bash-input>cat b.txt 2&gt;&amp;1 &amp;&amp; echo done</bash-input><bash-stdout></bash-stdout><bash-stderr>cat: b.txt: No such file or directory\nExit code 1</bash-stderr>',
      )
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.commands.map((c) => [c.line, c.outcome, c.exitCode, c.lastSeq])).toEqual([
      ['git status', 'ok', undefined, 2],
      ['cat b.txt 2>&1 && echo done', 'failed', 1, 4],
    ]);
    expect(ledger.errors.map((e) => [e.line, e.tool])).toEqual([['cat: b.txt: No such file or directory', 'user shell']]);
    expect(ledger.instructions.requests.map((r) => r.text)).toEqual(['Fix the flaky test.']);
  });

  it('reads OpenAI function tools named as a shell, whichever field holds the script', () => {
    const messages = conversation()
      .exchange('a', 'run_shell_command', { commands: ['cd /srv/app', 'make build'] }, 'built')
      .exchange('b', 'terminal', { input: 'ls -la' }, 'total 0')
      .exchange('c', 'exec', { args: ['pytest', '-q', 'tests/test x.py'] }, '1 passed')
      .exchange('d', 'execute_python', { code: 'print(1)' }, '1')
      .exchange('e', 'get_reservation_details', { reservation_id: 'ZFA04Y' }, '{}')
      .build();
    expect(extractLedger(messages).commands.map((c) => c.line)).toEqual(['cd /srv/app', 'ls -la', "pytest -q 'tests/test x.py'"]);
  });

  it('counts a mini-swe-agent action the harness ran: an observation, a timeout, the submission; not a refused turn', () => {
    const action = (command: string) => `THOUGHT: next.\n\n\`\`\`bash\n${command}\n\`\`\``;
    const messages = conversation()
      .user('Fix the bug.')
      .assistant(action('pytest -x'))
      .user(
        'The last command <command>pytest -x</command> timed out and has been killed.\nThe output of the command was:\n <output>\ncollected 1874 items\n</output>\nPlease try another command and make sure to avoid those requiring interactive input.',
      )
      .assistant(`${action('ls')}\n\n${action('pwd')}`)
      .user('Please always provide EXACTLY ONE action in triple backticks.')
      .assistant(action('echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached'))
      .user('diff --git a/x.py b/x.py')
      .build();
    const ledger = extractLedger(messages);
    expect(ledger.commands.map((c) => [c.line, c.outcome])).toEqual([
      ['pytest -x', 'failed'],
      ['echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached', 'ok'],
    ]);
    expect(ledger.errors.map((e) => e.line)).toEqual(['The last command timed out and has been killed.']);
  });
});

describe('renderLedger: recent actions', () => {
  const ledger = (): Ledger => ({
    ...emptyLedger(),
    files: [
      { path: '/repo/src/a.ts', actions: { read: 1, edited: 1 }, lastSeq: 12, changedSeq: 10, lastChange: 'edited' },
      { path: '/repo/src/b.ts', actions: { created: 1 }, lastSeq: 11, changedSeq: 11, lastChange: 'created' },
    ],
    commands: [
      { line: 'npm run build', outcome: 'failed', exitCode: 2, count: 1, lastSeq: 3 },
      { line: 'npm test', outcome: 'failed', exitCode: 1, count: 2, lastSeq: 9, lastOkSeq: 5 },
      { line: 'pytest', outcome: 'failed', count: 1, lastSeq: 13 },
      { line: 'make deploy', outcome: 'unknown', count: 1, lastSeq: 14 },
      { line: 'git status', outcome: 'ok', exitCode: 0, count: 1, lastSeq: 14, lastAt: 1 },
    ],
    errors: [
      { line: 'Error: old failure', tool: 'Bash', targetKind: 'command', target: 'npm test', seq: 4, resolved: true },
      { line: 'Error: expected 2, got 3', tool: 'Bash', targetKind: 'command', target: 'npm test', seq: 9, resolved: false },
      { line: 'FAILED tests/test_a.py::test_x', tool: 'execute_bash', targetKind: 'command', target: 'pytest', seq: 13, resolved: false },
    ],
  });

  it('shows each recent command with how its latest run ended, and the files touched last, newest last', () => {
    const rendered = renderLedger(ledger(), { maxTokens: 2_000, countTokens, cwd: '/repo', caps: { recentCommands: 4 } });
    expect(recentPart(rendered)).toBe(
      [
        'Recent actions (newest last):',
        '- `npm test` → exit 1: Error: expected 2, got 3 (seq 9)',
        '- `pytest` → failed: FAILED tests/test_a.py::test_x (seq 13)',
        '- `make deploy` → no result (seq 14)',
        '- `git status` → ok (seq 14)',
        '(+1 more in the archive)',
        'Files touched last: src/b.ts (created), src/a.ts (read)',
      ].join('\n'),
    );
    // the last failing command is one of them: not repeated on its own line
    expect(rendered).not.toContain('Last failing command');
  });

  it('still names the last failing command when it is older than the recent ones', () => {
    const l = ledger();
    l.commands = l.commands.map((c) => (c.line === 'pytest' || c.line === 'npm test' ? { ...c, outcome: 'ok' as const } : c));
    const rendered = renderLedger(l, { maxTokens: 2_000, countTokens, caps: { recentCommands: 2 } });
    expect(rendered).toContain('Last failing command: `npm run build` (exit 2, seq 3)');
  });

  it('keeps the recent commands whole while any other part can give way', () => {
    const l = ledger();
    l.instructions.constraints = Array.from({ length: 12 }, (_, i) => ({ text: `You must never touch module ${i}.`, seq: i + 1 }));
    const full = renderLedger(l, { maxTokens: 5_000, countTokens });
    const tight = renderLedger(l, { maxTokens: countTokens(recentPart(full)) + 12, countTokens });
    expect(recentPart(tight)).toBe(recentPart(full));
    expect(tight).not.toContain('must never touch module 0');
  });
});

describe('the recent actions of the shared real sessions, as the clip-archive renders them', () => {
  const sessions = loadRealSessions();
  const recentOf = (fragment: string): string => {
    const session = sessions.find((s) => s.name.includes(fragment));
    if (!session) throw new Error(`no session ${fragment}`);
    const options = { maxTokens: 1_400, countTokens: o200kTokens, escape: 'tags' as const, protectTags: ['compactd'] };
    return recentPart(renderLedger(extractLedger(session.messages), options));
  };

  it('a Claude Code session: the calls of one reply in the order they ran, the issue it took up last', () => {
    const part = recentOf('258c7280-ae70-4798-800f-63464d01a85d.jsonl');
    expect(part).toContain(
      [
        '- `mix test 2>&1 | tail -5` → ok (seq 182)',
        '- `mix credo --strict 2>&1 | tail -5` → ok (seq 182)',
        '- `bd close spotter-gqc.5 2>&1` → ok (seq 184)',
      ].join('\n'),
    );
    expect(part).toContain('- `bd update spotter-gqc.6 --status in_progress 2>&1` → ok (seq 188)\n(+37 more in the archive)');
  });

  it('a mini-swe-agent run: the clean-up before the submission, and the submission last', () => {
    const lines = recentOf('psf__requests-6028').split('\n');
    expect(lines[2]).toBe('- `mv requests/utils.py.bak requests/utils.py` → ok (seq 93)');
    expect(lines[5]).toBe('- `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached` → ok (seq 99)');
  });

  it('an OpenHands run: the failing test run with its recorded exit code and error line, then the passing one', () => {
    expect(recentOf('openhands-codeact-output.json')).toContain(
      [
        "- `cd /workspace/acme__confkit__2.4 && python -m pytest tests -q -x --no-header 2>&1 | tail -40` → exit 1: E KeyError: 'region' (seq 7)",
        '- `cd /workspace/acme__confkit__2.4 && python -m pytest tests -q --no-header 2>&1 | tail -5` → ok (seq 16)',
      ].join('\n'),
    );
  });
});
