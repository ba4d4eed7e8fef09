import { describe, expect, it } from 'vitest';

import { assertUsableOutput } from '../../../src/llm/output-check.js';
import { LlmError } from '../../../src/llm/port.js';

const SUMMARY = '## TASK STATE\n- fixing src/a.ts\n\n## FILES\n- src/a.ts';

function check(text: string, stopReason: 'end' | 'length' | 'other' = 'end', refused = false): LlmError | undefined {
  try {
    assertUsableOutput({ provider: 'anthropic', text, stopReason, refused });
    return undefined;
  } catch (error) {
    return error as LlmError;
  }
}

describe('assertUsableOutput', () => {
  it('accepts a summary', () => {
    expect(check(SUMMARY)).toBeUndefined();
  });

  it.each([
    ['', 'end', false, 'LLM_EMPTY_OUTPUT', true],
    ['   \n', 'end', false, 'LLM_EMPTY_OUTPUT', true],
    [SUMMARY, 'length', false, 'LLM_OUTPUT_TRUNCATED', false],
    [SUMMARY, 'end', true, 'LLM_REFUSED', false],
    ["I'm sorry, but I can't help with summarizing this conversation.", 'end', false, 'LLM_REFUSED', false],
    ['Internal Server Error: upstream connect error or disconnect/reset', 'end', false, 'LLM_ERROR_TEXT', true],
    ['{"error": {"message": "bad gateway"}}', 'end', false, 'LLM_ERROR_TEXT', true],
  ] as const)('rejects %j (stop %s, refused %s) as %s', (text, stop, refused, code, retryable) => {
    const error = check(text, stop, refused);
    expect(error).toBeInstanceOf(LlmError);
    expect(error?.kind).toBe('invalid_output');
    expect(error?.code).toBe(code);
    expect(error?.retryable).toBe(retryable);
  });
});
