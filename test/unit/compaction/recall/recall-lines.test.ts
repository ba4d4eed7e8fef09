import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { imageFacts } from '../../../../src/compaction/images.js';
import {
  focusLine,
  pieceLines,
  RECALL_MAX_PIECES,
  RECALL_OVERLAP_CHARS,
  RECALL_PIECE_CHARS,
  recallLines,
  recallPieces,
  splitLine,
} from '../../../../src/compaction/recall/recall-lines.js';
import type { Block } from '../../../../src/compaction/types.js';

describe('recallLines', () => {
  it('numbers the non-blank lines of text, tool input strings (nested) and tool results, each with its tool', () => {
    const content: Block[] = [
      { type: 'text', text: 'Reading it.\n\n  \nnext' },
      {
        type: 'tool_use',
        id: 'tu1',
        name: 'Edit',
        input: { file_path: 'lib/a.ex', edits: [{ old: 'x = 1', new: 'x = 2' }], replace_all: true },
      },
      {
        type: 'tool_result',
        tool_use_id: 'tu0',
        content: [
          { type: 'text', text: 'ok\nexit 0' },
          { type: 'image', source: { type: 'url', url: 'https://shots.example/u.png' } },
        ],
      },
      { type: 'tool_result', tool_use_id: 'unknown', content: 'lost' },
    ];
    // an image is a line of its own: its reference, which a search for `img:…` finds
    const ref = imageFacts({ type: 'image', source: { type: 'url', url: 'https://shots.example/u.png' } }).ref;
    expect(recallLines(content, new Map([['tu0', 'Bash']]))).toEqual([
      { line: 1, tool: null, text: 'Reading it.' },
      { line: 2, tool: null, text: 'next' },
      { line: 3, tool: 'Edit', text: 'lib/a.ex' },
      { line: 4, tool: 'Edit', text: 'x = 1' },
      { line: 5, tool: 'Edit', text: 'x = 2' },
      { line: 6, tool: 'Bash', text: 'ok' },
      { line: 7, tool: 'Bash', text: 'exit 0' },
      { line: 8, tool: 'Bash', text: `[image ${ref}: u.png]` },
      { line: 9, tool: null, text: 'lost' },
    ]);
  });
});

describe('splitLine', () => {
  it('keeps a short line whole', () => {
    expect(splitLine('a'.repeat(RECALL_PIECE_CHARS))).toEqual(['a'.repeat(RECALL_PIECE_CHARS)]);
  });

  it('holds every fragment of up to the overlap whole in one part, and covers the line exactly', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 0, maxLength: 2000 }),
        fc.nat(),
        fc.integer({ min: 1, max: RECALL_OVERLAP_CHARS }),
        (text, at, length) => {
          const parts = splitLine(text);
          const chars = Array.from(text);
          expect(parts.every((p) => Array.from(p).length <= RECALL_PIECE_CHARS)).toBe(true);
          const step = RECALL_PIECE_CHARS - RECALL_OVERLAP_CHARS;
          expect(parts.map((p, i) => (i === parts.length - 1 ? p : Array.from(p).slice(0, step).join(''))).join('')).toBe(text);
          if (chars.length === 0) return;
          const start = at % chars.length;
          const fragment = chars.slice(start, start + length).join('');
          expect(parts.some((p) => p.includes(fragment))).toBe(true);
        },
      ),
    );
  });
});

describe('recallPieces', () => {
  it('stops at RECALL_MAX_PIECES', () => {
    // lines too long to share a piece: one piece each
    const text = Array.from({ length: RECALL_MAX_PIECES + 10 }, (_, i) => `line ${i} `.padEnd(RECALL_PIECE_CHARS - 10, 'x')).join('\n');
    const pieces = recallPieces([{ type: 'text', text }], new Map());
    expect(pieces).toHaveLength(RECALL_MAX_PIECES);
    expect(pieces.at(-1)).toMatchObject({ line: RECALL_MAX_PIECES, part: 0 });
  });

  it('packs consecutive short lines of one tool into pieces of at most RECALL_PIECE_CHARS', () => {
    const content: Block[] = [
      { type: 'text', text: Array.from({ length: 30 }, (_, i) => `step ${i}: edited src/file_${i}.ts`).join('\n') },
      { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'npm test' } },
    ];
    const pieces = recallPieces(content, new Map());
    expect(pieces.length).toBeLessThan(6);
    expect(pieces.at(-1)).toMatchObject({ tool: 'Bash', text: 'npm test', line: 31, part: 0 });
    for (const piece of pieces) expect(piece.text.length).toBeLessThanOrEqual(RECALL_PIECE_CHARS);
  });

  it('unpacks to exactly the lines of the message (long ones as their parts), whatever the text', () => {
    const line = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ minLength: 300, maxLength: 1200 }));
    const block = fc.oneof(
      fc.array(line, { maxLength: 12 }).map((lines): Block => ({ type: 'text', text: lines.join('\n') })),
      fc
        .array(line, { maxLength: 4 })
        .map((lines): Block => ({ type: 'tool_use', id: 'x', name: 'Edit', input: { path: lines.join('\n') } })),
    );
    fc.assert(
      fc.property(fc.array(block, { maxLength: 6 }), (content) => {
        const pieces = recallPieces(content, new Map());
        const unpacked = pieces.flatMap((piece) => pieceLines(piece).map((l) => ({ ...l, part: piece.part })));
        const expected = recallLines(content, new Map()).flatMap((l) =>
          splitLine(l.text).map((text, part) => ({ line: l.line, tool: l.tool, text, part })),
        );
        expect(unpacked).toEqual(expected);
        for (const piece of pieces) expect(Array.from(piece.text).length).toBeLessThanOrEqual(RECALL_PIECE_CHARS);
      }),
      { numRuns: 300 },
    );
  });
});

describe('focusLine', () => {
  it('keeps the fragment in view within max characters', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 600 }), fc.string({ maxLength: 600 }), fc.integer({ min: 60, max: 300 }), (before, after, max) => {
        const fragment = 'NEEDLE-42';
        const line = `${before}${fragment}${after}`;
        const focused = focusLine(line, fragment, max);
        if (Array.from(line).length <= max) expect(focused).toBe(line);
        else expect(Array.from(focused).length).toBeLessThanOrEqual(max);
        if (!before.toLowerCase().includes('needle-42')) expect(focused).toContain(fragment);
      }),
    );
  });

  it('never cuts a surrogate pair and stays within max on any text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 3000 }),
        fc.string({ unit: 'binary', maxLength: 8 }),
        fc.integer({ min: 20, max: 300 }),
        (line, fragment, max) => {
          const focused = focusLine(line, fragment, max);
          expect(Array.from(focused).length).toBeLessThanOrEqual(max);
          expect(focused.isWellFormed()).toBe(line.isWellFormed());
        },
      ),
    );
  });
});
