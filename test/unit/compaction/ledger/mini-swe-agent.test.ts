import { describe, expect, it } from 'vitest';

import { extractLedger } from '../../../../src/compaction/ledger/index.js';
import { conversation } from '../../../fixtures/builders.js';

/** mini-swe-agent: no tool_use blocks; a fenced bash action, then the observation in the next user message. */

const action = (thought: string, command: string) => `THOUGHT: ${thought}\n\n\`\`\`bash\n${command}\n\`\`\``;
const observation = (code: number, output: string) => `<returncode>${code}</returncode>\n<output>\n${output}\n</output>`;

describe('extractLedger: mini-swe-agent fenced actions', () => {
  const messages = conversation()
    .system('You are a helpful assistant that can interact with a computer shell.')
    .user(
      '<pr_description>\nConsider the following PR description:\nProxy authentication bug\n</pr_description>\n\n## Boundaries\n- DO NOT MODIFY: Tests, configuration files\n- Always use non-interactive flags (-y, -f) for commands',
    )
    .assistant(action('Look at it. A plain fence is not an action:\n```\nnot run\n```', "nl -ba requests/utils.py | sed -n '980,1000p'"))
    .user(observation(0, '   980 def get_auth_from_url(url):'))
    .assistant(
      action(
        'Reproduce.',
        "cat <<'EOF' > reproduce.py\nimport requests\nprint(requests.utils.get_auth_from_url('http://a:b@c'))\nEOF\npython reproduce.py",
      ),
    )
    .user(
      observation(
        1,
        'Traceback (most recent call last):\n  File "reproduce.py", line 2, in <module>\n    print(x)\nValueError: Port out of range 0-65535',
      ),
    )
    .assistant(action('Fix it.', "sed -i '991,996c\\    parsed = parse_url(url)' requests/utils.py"))
    .user(observation(0, ''))
    .assistant(action('Check again.', 'python reproduce.py'))
    .user(observation(0, "('a', 'b')"))
    .assistant(action('Search.', 'grep -n "nothing" requests/utils.py'))
    .user(observation(1, ''))
    .assistant(action('Submit.', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached'))
    .user('diff --git a/requests/utils.py b/requests/utils.py')
    .build();
  const ledger = extractLedger(messages);

  it('reads the files the actions touched', () => {
    const files = Object.fromEntries(ledger.files.map((f) => [f.path, f.actions]));
    expect(files).toEqual({ 'requests/utils.py': { read: 1, edited: 1 }, 'reproduce.py': { created: 1 } });
  });

  it('records each action as a command with its return code; an error resolved by a later success', () => {
    expect(ledger.commands.map((c) => [c.line, c.outcome, c.exitCode])).toEqual([
      ["nl -ba requests/utils.py | sed -n '980,1000p'", 'ok', 0],
      ["cat <<'EOF' > reproduce.py", 'failed', 1],
      ["sed -i '991,996c\\ parsed = parse_url(url)' requests/utils.py", 'ok', 0],
      ['python reproduce.py', 'ok', 0],
      ['grep -n "nothing" requests/utils.py', 'ok', 1],
      // the submission ran too: its output is the run's result, not an observation
      ['echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached', 'ok', undefined],
    ]);
    // a heredoc's command is named by the line before its body; a traceback's error is its last line
    expect(ledger.errors).toEqual([
      {
        line: 'ValueError: Port out of range 0-65535',
        tool: 'bash',
        targetKind: 'command',
        target: "cat <<'EOF' > reproduce.py",
        seq: 5,
        resolved: false,
      },
    ]);
  });

  it('takes the first user turn as the request and skips observations and the final diff', () => {
    expect(ledger.instructions.requests.map((r) => r.text)).toEqual(['Consider the following PR description: Proxy authentication bug']);
    expect(ledger.instructions.constraints.map((c) => c.text)).toEqual([
      'DO NOT MODIFY: Tests, configuration files',
      'Always use non-interactive flags (-y, -f) for commands',
    ]);
  });
});
