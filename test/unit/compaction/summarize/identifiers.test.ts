import { describe, expect, it } from 'vitest';

import {
  errorLines,
  extractChunkIdentifiers,
  extractIdentifiers,
  extractPaths,
  findMissingIdentifiers,
  identifierRetention,
  identifiersWithin,
  rankChunkIdentifiers,
  renderChunkText,
} from '../../../../src/compaction/summarize/identifiers.js';
import { conversation } from '../../../fixtures/builders.js';

describe('extractIdentifiers (SPEC §5.6a)', () => {
  it.each([
    ['absolute paths', 'edit /home/me/app/src/main.ts now', ['/home/me/app/src/main.ts']],
    ['relative paths with extension', 'see lib/spotter/transcripts.ex:42 and src/a.ts.', ['lib/spotter/transcripts.ex', 'src/a.ts']],
    ['home and dot paths', 'cat ~/.config/app.toml ./run.sh', ['~/.config/app.toml', './run.sh']],
    ['URLs without trailing punctuation', 'docs at https://example.com/a?b=1.', ['https://example.com/a?b=1']],
    ['ticket ids', 'fixes PROJ-123 and #4521', ['PROJ-123', '#4521']],
    ['backticked strings', 'set `maxRetries: 0` please', ['maxRetries: 0']],
    ['quoted strings', 'the flag "--no-verify" is banned', ['--no-verify']],
    ['numbers with units', 'took 350ms, used 1.5 GB and 40%', ['350ms', '1.5 GB', '40%']],
  ])('finds %s', (_name, input, expected) => {
    expect(extractIdentifiers(input)).toEqual(expected);
  });

  it.each([
    ['and/or', 'this and/or that'],
    ['a date', 'on 2024/05/15'],
    ['a plain word', 'hello world'],
    ['a fraction', '1/2 of it'],
  ])('does not take %s for an identifier', (_name, input) => {
    expect(extractIdentifiers(input)).toEqual([]);
  });

  it('dedupes and orders errors first, then paths, in first-seen order', () => {
    const text = 'open src/b.ts\nTypeError: x is undefined\nopen src/a.ts\nopen src/b.ts';
    expect(extractIdentifiers(text)).toEqual(['TypeError: x is undefined', 'src/b.ts', 'src/a.ts']);
  });
});

describe('errorLines', () => {
  it.each([
    ['TypeError: Cannot read properties of undefined', true],
    ['** (CompileError) lib/app.ex:3: undefined function foo/0', true],
    ['error: could not compile dependency :bcrypt', true],
    ['error[E0425]: cannot find value `x` in this scope', true],
    ['FAILED tests/test_api.py::test_login - AssertionError', true],
    ['E       assert 1 == 2', true],
    ['Traceback (most recent call last):', true],
    ['src/main.c:12:5: error: expected ;', true],
    ['    raise ValueError: bad input', true],
    ['no errors found', false],
    ['const error = null;', false],
  ])('%s → %s', (line, isError) => {
    expect(errorLines(line).length > 0).toBe(isError);
  });

  it('cuts very long error lines at a word boundary', () => {
    const [line] = errorLines(`Error: ${'word '.repeat(100)}`);
    expect(line?.length).toBeLessThanOrEqual(160);
    expect(line?.startsWith('Error: word')).toBe(true);
  });
});

describe('extractChunkIdentifiers', () => {
  const chunk = conversation()
    .user('Deploy to https://staging.example.com and keep `DEBUG=0`, took 30s last time')
    .exchange('t1', 'Read', { file_path: '/srv/app/config.yml' }, 'listen: 8080\nsee /etc/nginx/nginx.conf "quoted in output"')
    .exchange('t2', 'Bash', { command: 'npm test' }, 'npm ERR! missing script: test', true)
    .build();

  it('takes tool names, inputs, errors and output paths, but not quoted strings from outputs', () => {
    const ids = extractChunkIdentifiers(chunk, 60);
    expect(ids).toEqual(
      expect.arrayContaining([
        'https://staging.example.com',
        'DEBUG=0',
        '30s',
        '/srv/app/config.yml',
        'Read',
        'Bash',
        'npm ERR! missing script: test',
        '/etc/nginx/nginx.conf',
      ]),
    );
    expect(ids).not.toContain('quoted in output');
  });

  it('reads tool inputs as values, never their JSON keys or file contents', () => {
    const edit = conversation()
      .exchange('e', 'Edit', { file_path: '/src/a.ts', old_string: 'import "./b.ts"', new_string: 'see "/etc/x.conf"' }, 'ok')
      .build();
    const ids = extractChunkIdentifiers(edit, 60);
    expect(ids).toEqual(['/src/a.ts', 'Edit']);
  });

  it('caps the list while keeping a share of every kind', () => {
    const builder = conversation().user('Error: the build failed in src/x.ts');
    for (let i = 0; i < 100; i += 1) builder.user(`look at "thing number ${i}"`);
    const ids = extractChunkIdentifiers(builder.build(), 20);
    expect(ids).toHaveLength(20);
    expect(ids).toContain('Error: the build failed in src/x.ts');
    expect(ids).toContain('src/x.ts');
  });

  it('renders a chunk as plain text with roles', () => {
    const text = renderChunkText(chunk);
    expect(text.startsWith('user:\nDeploy to')).toBe(true);
    expect(text).toContain('[tool result Bash id=t2 error]\nnpm ERR! missing script: test');
  });
});

describe('findMissingIdentifiers / identifiersWithin / identifierRetention', () => {
  const ids = ['src/a.ts', 'TypeError: x is  undefined', 'PROJ-1'];

  it('finds what the summary lacks, ignoring whitespace differences', () => {
    const summary = '## FILES\n- src/a.ts\n## ERRORS\n- TypeError: x is\nundefined';
    expect(findMissingIdentifiers(ids, summary)).toEqual(['PROJ-1']);
    expect(identifierRetention(ids, summary)).toEqual({ found: 2, total: 3 });
  });

  it('skips an identifier too long to fit and keeps listing shorter ones', () => {
    const huge = `https://example.com/${'a'.repeat(10_000)}`;
    expect(identifiersWithin(['src/a.ts', huge, 'PROJ-1'], 100)).toEqual(['src/a.ts', 'PROJ-1']);
  });
});

describe('path extraction inside the runs that hold a slash', () => {
  it('finds paths wrapped in punctuation, quotes and brackets as a scan of the whole text does', () => {
    const text = '(src/a.ts), "lib/b/c.json"; see [./d/e.md] or `~/f/g.yml`, at x@src/h.ts\nand /usr/bin/env: ok, https://x.io/not/a.path';
    // absolute (and home or dot) paths first, then relative ones: './d/e.md' matches both patterns
    expect(extractPaths(text)).toEqual(['./d/e.md', '~/f/g.yml', '/usr/bin/env', 'src/a.ts', 'lib/b/c.json', './d/e.md', 'x@src/h.ts']);
  });
});

describe('rankChunkIdentifiers', () => {
  it('keeps each kind once, in first-appearance order, however often a tool output repeats a path', () => {
    const output =
      Array.from({ length: 20 }, (_, i) => `ok ${i} src/mod/a.ts > case ${i}`).join('\n') + '\nError: expected 1 got 2 in src/mod/b.ts';
    const chunk = conversation()
      .user('Fix src/mod/a.ts and src/mod/a.ts')
      .exchange('t1', 'Bash', { command: 'npm test' }, output, true)
      .build();
    const ranked = rankChunkIdentifiers(chunk);
    expect(ranked.byKind.path).toEqual(['src/mod/a.ts']);
    expect(ranked.byKind.error).toEqual(['Error: expected 1 got 2 in src/mod/b.ts']);
    expect(ranked.ordered.filter((id) => id === 'src/mod/a.ts')).toHaveLength(1);
    expect(ranked.ordered.at(-1)).toBe('src/mod/b.ts');
  });
});
