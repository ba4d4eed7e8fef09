import { describe, expect, it } from 'vitest';

import {
  commandIdentifier,
  contextText,
  type EvalMessage,
  extractCommands,
  extractIds,
  identifierRetention,
  type SpanIdentifier,
  spanIdentifiers,
  stripIdentifierLists,
} from '../../../eval/metrics.js';
import { IDENTIFIERS_HEADING } from '../../../src/compaction/summarize/index.js';
import type { Block, Role } from '../../../src/compaction/types.js';
import { text, toolResult, toolUse } from '../../fixtures/builders.js';

const msg = (role: Role, content: string | Block[], metadata?: Record<string, unknown>): EvalMessage => ({
  role,
  content: typeof content === 'string' ? [text(content)] : content,
  ...(metadata ? { metadata } : {}),
});

const ids = (...values: Array<[string, SpanIdentifier['kind']]>): SpanIdentifier[] => values.map(([value, kind]) => ({ value, kind }));

describe('identifierRetention', () => {
  const path = ids(['/app/src/auth/login.ts', 'path']);

  it.each([
    ['present verbatim', 'Edited /app/src/auth/login.ts to validate the body.', 1],
    ['absent', 'Edited the login handler to validate the body.', 0],
    ['present inside backticks and markdown', '- `/app/src/auth/login.ts` (edited)', 1],
    ['only a prefix present', 'Edited /app/src/auth/login.tsx instead', 1],
    ['cut by a line break inside the token', 'Edited /app/src/auth/\nlogin.ts', 0],
    ['case differs', 'Edited /APP/src/auth/login.ts', 0],
  ])('a path %s', (_name, context, found) => {
    expect(identifierRetention(path, context).found).toBe(found);
  });

  it('counts a multi-word identifier wrapped across lines as present (whitespace aside)', () => {
    const error = ids(["TypeError: Cannot read properties of undefined (reading 'user')", 'error']);
    const wrapped = "ERRORS\n- TypeError: Cannot read properties\n  of undefined (reading 'user')";
    expect(identifierRetention(error, wrapped)).toMatchObject({ found: 1, total: 1, ratio: 1, missing: [] });
  });

  it('reports the ratio, per-kind counts and the missing identifiers', () => {
    const span = ids(['/a/b.ts', 'path'], ['/a/c.ts', 'path'], ['https://x.dev/docs', 'url'], ['npm test', 'command']);
    const result = identifierRetention(span, 'read /a/b.ts, then ran npm test');
    expect(result.found).toBe(2);
    expect(result.total).toBe(4);
    expect(result.ratio).toBe(0.5);
    expect(result.byKind).toEqual({ path: { found: 1, total: 2 }, url: { found: 0, total: 1 }, command: { found: 1, total: 1 } });
    expect(result.missing.map((m) => m.value)).toEqual(['/a/c.ts', 'https://x.dev/docs']);
  });

  it('is 1 for a span without identifiers', () => {
    expect(identifierRetention([], 'anything').ratio).toBe(1);
  });
});

describe('stripIdentifierLists', () => {
  it('removes the gate appendix and keeps the summary, so a listed-only identifier counts as lost before the gate', () => {
    // the shape of a summary stored before the gate stopped appending lists
    const summary = `## FILES\n- /a/b.ts (edited)\n\n${IDENTIFIERS_HEADING}\n- /a/c.ts\n- ERR_CONNECTION_RESET`;
    const stripped = stripIdentifierLists(`<compactd-summary>\n${summary}\n</compactd-summary>\nafter`);
    expect(stripped).toBe('<compactd-summary>\n## FILES\n- /a/b.ts (edited)\n\n</compactd-summary>\nafter');
    const span = ids(['/a/b.ts', 'path'], ['/a/c.ts', 'path']);
    expect(identifierRetention(span, summary).found).toBe(2);
    expect(identifierRetention(span, stripped).found).toBe(1);
  });

  it('leaves a text without an appendix unchanged', () => {
    expect(stripIdentifierLists('## FILES\n- /a/b.ts\n- none')).toBe('## FILES\n- /a/b.ts\n- none');
  });
});

describe('commands', () => {
  it.each([
    ['a one-liner', 'npm test -- auth', 'npm test -- auth'],
    ['the first non-empty line of a heredoc', "\ncat <<'EOF' > x.py\nprint(1)\nEOF", "cat <<'EOF' > x.py"],
    ['whitespace collapsed', 'git   log\t--oneline', 'git log --oneline'],
    ['an empty command', '  \n ', null],
  ])('%s', (_name, command, expected) => {
    expect(commandIdentifier(command)).toBe(expected);
  });

  it('cuts a long command at a word boundary within 160 characters', () => {
    const long = `grep -r ${'pattern '.repeat(40)}src/`;
    const id = commandIdentifier(long) as string;
    expect(id.length).toBeLessThanOrEqual(160);
    expect(long.startsWith(id)).toBe(true);
  });

  it('reads Bash tool inputs and fenced bash actions of the assistant, deduplicated', () => {
    const messages = [
      msg('assistant', [
        toolUse('t1', 'Bash', { command: 'mix test', description: 'run tests' }),
        toolUse('t2', 'Read', { file_path: '/a.ex' }),
      ]),
      msg('user', [toolResult('t1', 'ok'), toolResult('t2', 'x')]),
      msg('assistant', 'THOUGHT: look\n```bash\nls -la src/\n```'),
      msg('user', '```bash\nrm -rf /\n```'),
      msg('assistant', [toolUse('t3', 'Bash', { command: 'mix test' })]),
    ];
    expect(extractCommands(messages)).toEqual(['mix test', 'ls -la src/']);
  });
});

describe('extractIds', () => {
  it.each([
    ['reservation and flight codes', 'Reservation NM1VX1 on flight HAT300.', ['NM1VX1', 'HAT300']],
    ['user and payment ids', 'user sophia_silva_7557 pays with credit_card_4196779', ['sophia_silva_7557', 'credit_card_4196779']],
    ['ISO dates and e-mails', 'flying 2024-05-25, mail sophia.silva5929@example.com', ['2024-05-25', 'sophia.silva5929@example.com']],
    ['no letters-only words, numbers, units or path parts', 'please rebook 12345 in 100ms at /tmp/be613ab.output', []],
  ])('%s', (_name, input, expected) => {
    expect(extractIds(input)).toEqual(expected);
  });
});

describe('spanIdentifiers', () => {
  const span = [
    msg('user', 'Fix the crash in `parse_config`; see https://example.com/issue and PROJ-42. Reservation NM1VX1.'),
    msg('assistant', [toolUse('t1', 'Bash', { command: 'pytest tests/test_config.py' }), toolUse('t2', 'Glob', { pattern: '**/*.py' })]),
    msg('user', [toolResult('t1', 'E   ValueError: bad key\n1 failed in 0.2s'), toolResult('t2', 'src/app/config.py\nsrc/app/main.py')]),
  ];
  const found = spanIdentifiers(span);
  const kindOf = (value: string) => found.find((i) => i.value === value)?.kind;

  it.each([
    ['E   ValueError: bad key', 'error'],
    ['tests/test_config.py', 'path'],
    ['src/app/config.py', 'output-path'],
    ['https://example.com/issue', 'url'],
    ['PROJ-42', 'ticket'],
    ['NM1VX1', 'id'],
    ['Bash', 'tool'],
    ['parse_config', 'quoted'],
    ['pytest tests/test_config.py', 'command'],
  ])('finds %s as %s', (value, kind) => {
    expect(kindOf(value)).toBe(kind);
  });

  it('lists each identifier once', () => {
    expect(new Set(found.map((i) => i.value)).size).toBe(found.length);
  });
});

describe('contextText', () => {
  it('renders text, tool names with every input value, and tool outputs, without JSON escaping', () => {
    const rendered = contextText([
      msg('assistant', [toolUse('t1', 'Write', { file_path: '/a "b".ts', content: 'export const x = 1;' })]),
      msg('user', [toolResult('t1', 'written')]),
    ]);
    expect(rendered).toBe('Write\n/a "b".ts\nexport const x = 1;\n\nwritten');
  });
});
