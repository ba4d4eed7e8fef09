import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { clipSnippet } from '../../../src/db/repos/archive.js';

describe('clipSnippet', () => {
  it('keeps a short snippet as it is', () => {
    expect(clipSnippet('the **quokka** lives here', 480)).toBe('the **quokka** lives here');
  });

  it('is at most `max` characters and keeps the first highlighted match in view', () => {
    const text = fc.string({ unit: fc.constantFrom('a', ' ', 'é', '😀', 'x'), maxLength: 3000 });
    fc.assert(
      fc.property(text, text, fc.integer({ min: 40, max: 600 }), (before, after, max) => {
        const snippet = `${before}**match**${after}`;
        const clipped = clipSnippet(snippet, max);
        expect(Array.from(clipped).length).toBeLessThanOrEqual(max);
        expect(clipped).toContain('**match**');
      }),
    );
  });

  it('marks what it cut with an ellipsis', () => {
    const clipped = clipSnippet(`${'x'.repeat(2000)} **end**`, 100);
    expect(clipped.startsWith('…')).toBe(true);
    expect(clipped.endsWith('**end**')).toBe(true);
  });
});
