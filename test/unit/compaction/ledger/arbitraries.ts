import fc from 'fast-check';

import type { Block, HistoryMessage, Role } from '../../../../src/compaction/types.js';
import { makeMessage, toolResult, toolUse } from '../../../fixtures/builders.js';

/**
 * fast-check generators of agent sessions for the ledger's properties: file tools of every
 * convention on a few shared paths (so they repeat), commands that fail and later pass, todo
 * lists, calls of other tools, user requests with constraints. A session is either a
 * tool-calling agent's or a fenced-action agent's (mini-swe-agent), never both, as in life.
 * Each step is one unit (a call with its result), so a split between steps never cuts an
 * exchange.
 */

const PATHS = ['src/a.ts', 'src/b.ts', '/repo/lib/c.py', 'README.md'];
const COMMANDS = [
  'npm test',
  'npm run build',
  'pytest -q tests/test_a.py',
  "sed -i 's/x/y/' src/a.ts",
  'rm src/b.ts',
  'mv src/a.ts src/b.ts',
  'cat README.md',
];
const ERRORS = [
  'Error: expected 2, got 3',
  "KeyError: 'region'",
  'FAILED tests/test_a.py::test_x - assert 1 == 2',
  'fatal: not a git repository',
];
const SENTENCES = [
  'Fix the build.',
  'It must never touch the network.',
  "Don't rename public functions.",
  'Add a flag.',
  'Make sure the tests pass.',
  'Thanks!',
];

export type Step =
  | { t: 'user'; sentences: string[] }
  | { t: 'file'; tool: 'Read' | 'Write' | 'Edit' | 'apply_patch' | 'str_replace_editor'; path: string; fail: boolean; size: number }
  | { t: 'command'; tool: 'Bash' | 'execute_bash' | 'shell'; command: string; exit: number; error: string }
  | { t: 'fenced'; command: string; exit: number; error: string }
  | { t: 'todo'; items: Array<{ content: string; status: 'pending' | 'in_progress' | 'completed' }> }
  | { t: 'call'; id: string; fail: boolean }
  | { t: 'assistant' };

const exit = fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.constantFrom(1, 2, 127) });

const toolStep: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('user' as const), sentences: fc.shuffledSubarray(SENTENCES, { minLength: 1, maxLength: 3 }) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('file' as const),
      tool: fc.constantFrom('Read' as const, 'Write' as const, 'Edit' as const, 'apply_patch' as const, 'str_replace_editor' as const),
      path: fc.constantFrom(...PATHS),
      fail: fc.boolean(),
      size: fc.integer({ min: 0, max: 300 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('command' as const),
      tool: fc.constantFrom('Bash' as const, 'execute_bash' as const, 'shell' as const),
      command: fc.constantFrom(...COMMANDS),
      exit,
      error: fc.constantFrom(...ERRORS),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('todo' as const),
      items: fc.array(
        fc.record({
          content: fc.constantFrom('Read', 'Patch', 'Test', 'Ship'),
          status: fc.constantFrom('pending' as const, 'in_progress' as const, 'completed' as const),
        }),
        { maxLength: 4 },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('call' as const), id: fc.constantFrom('ZFA04Y', 'H9ZU1C'), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('assistant' as const) }) },
);

const fencedStep: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('fenced' as const),
      command: fc.constantFrom(...COMMANDS),
      exit,
      error: fc.constantFrom(...ERRORS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('assistant' as const) }) },
);

/** A session as steps: tool-calling, or fenced actions after one task message. */
export const sessionSteps: fc.Arbitrary<Step[]> = fc.oneof(
  { weight: 4, arbitrary: fc.array(toolStep, { minLength: 1, maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.shuffledSubarray(SENTENCES, { minLength: 1 }), fc.array(fencedStep, { minLength: 1, maxLength: 20 }))
      .map(([sentences, steps]): Step[] => [{ t: 'user', sentences }, ...steps]),
  },
);

function fileCall(step: Extract<Step, { t: 'file' }>, id: string): { use: Block; output: string } {
  const body = 'x'.repeat(step.size);
  switch (step.tool) {
    case 'Read':
      return { use: toolUse(id, 'Read', { file_path: step.path }), output: `1→${body}` };
    case 'Write':
      return { use: toolUse(id, 'Write', { file_path: step.path, content: body }), output: `File created successfully at: ${step.path}` };
    case 'Edit':
      return {
        use: toolUse(id, 'Edit', { file_path: step.path, old_string: 'x', new_string: body }),
        output: `The file ${step.path} has been updated successfully.`,
      };
    case 'apply_patch':
      return {
        use: toolUse(id, 'apply_patch', { input: `*** Begin Patch\n*** Update File: ${step.path}\n-a\n+${body}\n*** End Patch` }),
        output: 'Done!',
      };
    case 'str_replace_editor':
      return {
        use: toolUse(id, 'str_replace_editor', { command: 'str_replace', path: step.path, old_str: 'a', new_str: body }),
        output: 'The file has been edited.',
      };
  }
}

/** The messages of each step (seqs from `start`, with gaps), so a session can be cut between steps. */
export function stepMessages(steps: readonly Step[], start = 1): HistoryMessage[][] {
  let seq = start;
  let ids = 0;
  const message = (role: Role, content: string | Block[]) => {
    const built = makeMessage(seq, role, content);
    seq += 1 + (seq % 3 === 0 ? 2 : 0);
    return built;
  };
  return steps.map((step) => {
    const id = `call_${(ids += 1)}`;
    switch (step.t) {
      case 'user':
        return [message('user', step.sentences.join(' '))];
      case 'assistant':
        return [message('assistant', 'Let me think about it.')];
      case 'file': {
        const { use, output } = fileCall(step, id);
        return [
          message('assistant', [use]),
          message('user', [toolResult(id, step.fail ? `<tool_use_error>${ERRORS[0]}</tool_use_error>` : output, step.fail)]),
        ];
      }
      case 'command': {
        const input = step.tool === 'shell' ? { command: ['bash', '-lc', step.command] } : { command: step.command };
        const failed = step.exit !== 0;
        const output =
          step.tool === 'Bash'
            ? failed
              ? `Exit code ${step.exit}\n${step.error}`
              : 'ok'
            : step.tool === 'shell'
              ? JSON.stringify({ output: failed ? step.error : 'ok', metadata: { exit_code: step.exit } })
              : `${failed ? step.error : 'ok'}\n[The command completed with exit code ${step.exit}.]`;
        return [
          message('assistant', [toolUse(id, step.tool, input)]),
          message(step.tool === 'shell' ? 'tool' : 'user', [toolResult(id, output, step.tool === 'Bash' && failed)]),
        ];
      }
      case 'fenced':
        return [
          message('assistant', `THOUGHT: next.\n\n\`\`\`bash\n${step.command}\n\`\`\``),
          message('user', `<returncode>${step.exit}</returncode>\n<output>\n${step.exit === 0 ? 'ok' : step.error}\n</output>`),
        ];
      case 'todo':
        return [
          message('assistant', [toolUse(id, 'TodoWrite', { todos: step.items.map((i) => ({ ...i, activeForm: i.content })) })]),
          message('user', [toolResult(id, 'Todos have been modified successfully.')]),
        ];
      case 'call':
        return [
          message('assistant', [toolUse(id, 'get_reservation_details', { reservation_id: step.id })]),
          message('tool', [toolResult(id, step.fail ? 'Error: reservation not found' : '{}', step.fail)]),
        ];
    }
  });
}

/** A session and two cut points between its steps (0 ≤ i ≤ j ≤ steps). */
export const cutSession = sessionSteps.chain((steps) =>
  fc
    .tuple(fc.constant(steps), fc.integer({ min: 0, max: steps.length }), fc.integer({ min: 0, max: steps.length }))
    .map(([s, a, b]) => ({ steps: s, cuts: [Math.min(a, b), Math.max(a, b)] as const })),
);
