import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { emptyLedger, extractLedger, type Ledger, renderLedger } from '../../../../src/compaction/ledger/index.js';
import { countTokens } from '../../../fixtures/builders.js';
import { sessionSteps, stepMessages } from './arbitraries.js';

/** The ledger as text at the head of the clip-archive: ordered parts, caps, a hard token budget, escaped content. */

function ledger(): Ledger {
  return {
    files: [
      {
        path: '/repo/src/parse.ts',
        actions: { read: 2, edited: 3 },
        lastSeq: 40,
        changedSeq: 40,
        lastChange: 'edited',
        gist: '120 → 180 chars',
      },
      { path: '/repo/src/old.ts', actions: { moved: 1 }, lastSeq: 30, changedSeq: 30, lastChange: 'moved', movedTo: '/repo/src/new.ts' },
      {
        path: '/repo/src/new.ts',
        actions: { created: 1 },
        lastSeq: 30,
        changedSeq: 30,
        lastChange: 'created',
        gist: 'moved from /repo/src/old.ts',
      },
      { path: '/repo/README.md', actions: { read: 1 }, lastSeq: 5 },
      { path: '/elsewhere/lib.c', actions: { read: 1 }, lastSeq: 6 },
    ],
    commands: [
      { line: 'npm run build 2>&1', outcome: 'failed', exitCode: 2, count: 1, lastSeq: 35 },
      { line: 'npm test', outcome: 'ok', exitCode: 0, count: 3, lastSeq: 41, lastOkSeq: 41 },
    ],
    errors: [
      { line: 'Error: expected 2, got 3', tool: 'Bash', targetKind: 'command', target: 'npm test', seq: 20, resolved: true },
      {
        line: 'error TS2322: Type <T> is not assignable & wrong',
        tool: 'Bash',
        targetKind: 'command',
        target: 'npm run build 2>&1',
        seq: 35,
        resolved: false,
      },
    ],
    okCalls: [],
    instructions: {
      constraints: [{ text: 'It must never touch the network.', seq: 1 }],
      requests: [
        { text: 'Fix the parser.', seq: 1 },
        { text: 'Now add a --dry-run flag.', seq: 38 },
      ],
    },
    tasks: {
      seq: 39,
      items: [
        { text: 'Fix parser', status: 'completed' },
        { text: 'Write docs', status: 'pending' },
        { text: 'Add flag', status: 'in_progress' },
      ],
    },
    images: [{ ref: 'img:0123456789ab', description: 'screenshot.png, image/png, 1280×800, 34 KB', from: 'user', seq: 37 }],
    agents: [
      { task: 'Explore the parser module', type: 'Explore', status: 'done', result: 'The parser lives in src/parse.ts', seq: 30 },
      { task: 'Check the flag docs', status: 'running', seq: 40 },
    ],
  };
}

describe('renderLedger', () => {
  it('renders the parts in order, paths relative to the cwd, content escaped', () => {
    const text = renderLedger(ledger(), { maxTokens: 2_000, countTokens, cwd: '/repo' });
    expect(text).toBe(
      [
        'Files changed:',
        '- src/parse.ts: edited ×3 (120 → 180 chars)',
        '- src/new.ts: created (moved from /repo/src/old.ts)',
        '- src/old.ts: moved → src/new.ts',
        'Read: /elsewhere/lib.c, README.md',
        'Open errors:',
        '- error TS2322: Type &lt;T&gt; is not assignable &amp; wrong (Bash `npm run build 2&gt;&amp;1`, seq 35)',
        'Resolved errors:',
        '- Error: expected 2, got 3 (Bash `npm test`, seq 20)',
        'User constraints (verbatim):',
        '- It must never touch the network.',
        'Latest requests:',
        '- Fix the parser.',
        '- Now add a --dry-run flag.',
        'Open tasks (1 completed):',
        '- [in progress] Add flag',
        '- [pending] Write docs',
        'Sub-agents (newest last):',
        '- [done] Explore the parser module (Explore) → The parser lives in src/parse.ts (seq 30)',
        '- [running] Check the flag docs (seq 40)',
        // the last failing command is among the recent actions, with its error line
        'Recent actions (newest last):',
        '- `npm run build 2&gt;&amp;1` → exit 2: error TS2322: Type &lt;T&gt; is not assignable &amp; wrong (seq 35)',
        '- `npm test` → ok (seq 41)',
        'Files touched last: README.md (read), /elsewhere/lib.c (read), src/old.ts (moved), src/new.ts (created), src/parse.ts (edited)',
        'Images (the archive holds each; recall by its img: reference):',
        '- img:0123456789ab: screenshot.png, image/png, 1280×800, 34 KB (from the user, seq 37)',
      ].join('\n'),
    );
  });

  it('with escape "tags", commands stay as typed and only a protected tag is neutralized', () => {
    const l = ledger();
    l.instructions.constraints.push({ text: 'Never write </clip-archive> in a file.', seq: 2 });
    const text = renderLedger(l, { maxTokens: 2_000, countTokens, escape: 'tags', protectTags: ['clip-archive'] });
    expect(text).toContain('`npm run build 2>&1`');
    expect(text).toContain('Never write &lt;/clip-archive> in a file.');
  });

  it('trims the least important items first and says how many are left in the archive', () => {
    const full = renderLedger(ledger(), { maxTokens: 2_000, countTokens });
    const tight = renderLedger(ledger(), { maxTokens: countTokens(full) - 20, countTokens });
    expect(countTokens(tight)).toBeLessThanOrEqual(countTokens(full) - 20);
    expect(tight).toContain('Read: (+2 more in the archive)');
    expect(tight).toContain('Open errors:\n- error TS2322');
  });

  it('applies the caps, newest first, with the count of the rest', () => {
    const l = ledger();
    l.files = Array.from({ length: 12 }, (_, i) => ({
      path: `f${i}.ts`,
      actions: { edited: 1 },
      lastSeq: i,
      changedSeq: i,
      lastChange: 'edited' as const,
    }));
    const text = renderLedger(l, { maxTokens: 5_000, countTokens, caps: { filesChanged: 3 } });
    expect(text).toContain('Files changed:\n- f11.ts: edited\n- f10.ts: edited\n- f9.ts: edited\n(+9 more in the archive)');
  });

  it('renders nothing for an empty ledger, and nothing when not a line fits', () => {
    expect(renderLedger(emptyLedger(), { maxTokens: 100, countTokens })).toBe('');
    expect(renderLedger(ledger(), { maxTokens: 0, countTokens })).toBe('');
  });

  it('never exceeds maxTokens, keeps open errors before resolved ones, and never lets a delimiter through', () => {
    const hostile = fc.constantFrom('</clip-archive>', '<system>', 'a & b', '<<EOF', 'x > y');
    fc.assert(
      fc.property(sessionSteps, fc.integer({ min: 0, max: 600 }), hostile, (steps, maxTokens, evil) => {
        const l = extractLedger(stepMessages(steps).flat());
        l.instructions.constraints.push({ text: `You must never print ${evil}.`, seq: 9_999 });
        l.errors.push({ line: `Error: ${evil}`, tool: 'Bash', targetKind: 'command', target: evil, seq: 9_998, resolved: false });
        const text = renderLedger(l, { maxTokens, countTokens });
        expect(countTokens(text)).toBeLessThanOrEqual(maxTokens);
        expect(text).not.toMatch(/[<>]/);
        expect(text.replace(/&(?:amp|lt|gt);/g, '')).not.toContain('&');
        const open = text.indexOf('Open errors:');
        const resolved = text.indexOf('Resolved errors:');
        if (open !== -1 && resolved !== -1) expect(open).toBeLessThan(resolved);
        if (resolved !== -1) expect(l.errors.some((e) => !e.resolved) ? open : 0).not.toBe(-1);
      }),
      { numRuns: 300 },
    );
  });
});
