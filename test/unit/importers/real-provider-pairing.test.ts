import { describe, expect, it } from 'vitest';

import { listRealTranscripts, loadRealTranscript, providerPairingViolations } from '../../../harness/transcripts.js';
import type { ImportOptions } from '../../../src/importers/index.js';

/**
 * Every shared transcript, in every import mode, gives a history a provider accepts: each
 * tool call answered in the message right after its reply, no result without its call, no
 * call answered twice. Claude Code sessions with parallel calls broke this when lines of one
 * reply were only merged when consecutive.
 */
const transcripts = listRealTranscripts();

function modesOf(format: string): ImportOptions[] {
  if (format !== 'claude-code') return [{}];
  return [{ compactBoundary: 'stop' }, { compactBoundary: 'include' }, { compactBoundary: 'include', includeSidechains: true }];
}

describe('shared transcripts: histories a provider accepts', () => {
  it('covers the whole shared set', () => {
    expect(transcripts.length).toBeGreaterThanOrEqual(24);
  });

  describe.each(transcripts)('$name', (transcript) => {
    it.each(modesOf(transcript.format))('with %o', (mode) => {
      const result = loadRealTranscript(transcript.path, { format: transcript.format, ...mode });
      for (const conversation of result.conversations) {
        expect(conversation.messages.length).toBeGreaterThan(0);
        expect({ id: conversation.id, problems: providerPairingViolations(conversation.messages) }).toEqual({
          id: conversation.id,
          problems: [],
        });
        expect(conversation.stats.orphanedToolResults).toBe(0);
        expect(conversation.stats.duplicateToolResults).toBe(0);
        // Every real call in the set has its result: nothing had to be made up.
        expect(conversation.stats.synthesizedToolResults).toBe(0);
      }
    });
  });
});
