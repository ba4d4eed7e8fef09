import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { completeCutAnswer, completeLines, holdsEverySection, SECTIONS, sectionsCutOff } from '../../../src/compaction/summarize/index.js';

/**
 * An answer cut at its cap is kept whatever the cap cut off (SPEC §5.6a): what the model wrote
 * stays verbatim at the head, and the sections it never reached come from a summary of the
 * same source (the local extractor's), so the result always holds the seven sections.
 */

const section = (name: string, lines: readonly string[]) => `## ${name}\n${lines.map((line) => `- ${line}`).join('\n')}`;
const answer = (lines: (name: string) => readonly string[]) => SECTIONS.map((name) => section(name, lines(name))).join('\n\n');
const FILLER = answer((name) => [`extracted for ${name.toLowerCase()}`]);
const headingCount = (text: string, name: string) => text.split('\n').filter((line) => line === `## ${name}`).length;

describe('completeCutAnswer', () => {
  it('keeps the written sections verbatim and takes the ones after the cut from the filler', () => {
    const full = answer((name) => [`model line one of ${name}`, `model line two of ${name}`]);
    const cut = full.slice(0, full.indexOf('model line two of TOOL HISTORY') + 12);
    const { text, completed } = completeCutAnswer(cut, FILLER);
    expect(completed).toEqual(['ERRORS', 'DECISIONS', 'USER GUIDANCE', 'NEXT STEPS']);
    expect(text.startsWith(full.slice(0, full.indexOf('- model line two of TOOL HISTORY')).trimEnd())).toBe(true);
    // the partial line the cap stopped in is dropped, not kept half-written
    expect(text).not.toContain('model line two of TOOL HISTORY');
    expect(text).toContain('- extracted for errors');
    expect(text).not.toContain('- extracted for files');
    expect(holdsEverySection(text)).toBe(true);
  });

  it('a heading the cap came right after is written again from the filler, once', () => {
    const full = answer((name) => [`model ${name}`]);
    const cut = `${full.slice(0, full.indexOf('## ERRORS') + '## ERRORS'.length)}\n`;
    expect(sectionsCutOff(cut)).toEqual(['ERRORS', 'DECISIONS', 'USER GUIDANCE', 'NEXT STEPS']);
    const { text } = completeCutAnswer(cut, FILLER);
    expect(headingCount(text, 'ERRORS')).toBe(1);
    expect(text).toContain('## ERRORS\n- extracted for errors');
  });

  it('an answer that reached every section needs nothing, and a filler without a section gives it a none line', () => {
    const full = answer((name) => [`model ${name}`]);
    expect(completeCutAnswer(`${full}\n- and a partial li`, FILLER)).toEqual({ text: full, completed: [] });
    const { text } = completeCutAnswer(full.slice(0, full.indexOf('## NEXT STEPS')), section('FILES', ['only files']));
    expect(text.endsWith('## NEXT STEPS\n- none')).toBe(true);
  });

  it('wherever the cap falls, the result holds each section once, in order, and opens with what the model wrote', () => {
    const line = fc.stringMatching(/^[a-z]([a-z0-9 ./_-]{0,30}[a-z0-9])?$/);
    const bodies = fc.array(fc.array(line, { minLength: 1, maxLength: 4 }), { minLength: SECTIONS.length, maxLength: SECTIONS.length });
    fc.assert(
      fc.property(bodies, fc.nat(), (lines, at) => {
        const full = answer((name) => lines[SECTIONS.indexOf(name as (typeof SECTIONS)[number])] ?? []);
        const cut = full.slice(0, at % (full.length + 1));
        const { text, completed } = completeCutAnswer(cut, FILLER);
        expect(holdsEverySection(text)).toBe(true);
        for (const name of SECTIONS) expect(headingCount(text, name)).toBe(1);
        // every complete line the model wrote before its last one is kept, in place
        const written = completeLines(cut).split('\n').slice(0, -1).join('\n');
        expect(text.startsWith(written)).toBe(true);
        // a section comes from the filler exactly when it is reported completed
        for (const name of SECTIONS) expect(text.includes(`extracted for ${name.toLowerCase()}`)).toBe(completed.includes(name));
      }),
    );
  });
});
