import { describe, expect, it } from 'vitest';

import { holdsEverySection, keepCutAnswer } from '../../../../src/compaction/summarize/cut-answer.js';
import { SECTIONS } from '../../../../src/compaction/summarize/prompt.js';

/** A summary in the seven sections, two bullets each, as the directive asks for it. */
function summary(): string {
  return SECTIONS.map(
    (name, i) => `## ${name}\n- first point of ${name.toLowerCase()} (src/app/${i}.ts)\n- second point, with exit code ${i}`,
  ).join('\n\n');
}

describe('keepCutAnswer: an answer stopped at its runaway cap', () => {
  it('keeps one cut inside its last section, dropping the line being written', () => {
    const full = summary();
    const cut = full.slice(0, full.lastIndexOf('exit code 6') + 4);
    const kept = keepCutAnswer(cut);
    expect(kept).not.toBeNull();
    expect(kept).toContain('## NEXT STEPS\n- first point of next steps');
    expect(kept!.split('\n').at(-1)).toBe('- first point of next steps (src/app/6.ts)');
    expect(kept!.endsWith('(src/app/6.ts)')).toBe(true);
  });

  it('keeps a whole line when the cut fell right after a line break', () => {
    const full = `${summary()}\n`;
    expect(keepCutAnswer(full)).toBe(full.trimEnd());
  });

  it('refuses one that never reached its last section', () => {
    const full = summary();
    const cut = full.slice(0, full.indexOf('## USER GUIDANCE') + 30);
    expect(keepCutAnswer(cut)).toBeNull();
  });

  it('refuses one cut right after its last heading, before any of its lines', () => {
    const full = summary();
    expect(keepCutAnswer(full.slice(0, full.indexOf('## NEXT STEPS') + '## NEXT STEPS\n- fir'.length))).toBeNull();
  });

  it('needs the headings in order, each with content; tolerant of heading depth and case', () => {
    expect(holdsEverySection(summary())).toBe(true);
    expect(holdsEverySection(summary().replace(/^## /gm, '### ').toLowerCase())).toBe(true);
    const swapped = summary().replace('## FILES', '## TMP').replace('## NEXT STEPS', '## FILES').replace('## TMP', '## NEXT STEPS');
    expect(holdsEverySection(swapped)).toBe(false);
    expect(holdsEverySection(summary().replace(/## ERRORS\n- [^\n]*\n- [^\n]*/, '## ERRORS\n'))).toBe(false);
    expect(holdsEverySection('TASK STATE and more, but no sections')).toBe(false);
  });
});
