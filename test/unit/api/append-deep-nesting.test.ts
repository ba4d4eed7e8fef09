import { describe, expect, it } from 'vitest';

import { prepareAppend } from '../../../src/api/append-messages.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { AppError } from '../../../src/lib/errors.js';

describe('prepareAppend on deeply nested content', () => {
  it('answers a 400 naming the message, not a stack overflow, for 200k nested arrays', () => {
    const depth = 200_000;
    const content = JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;
    const run = () =>
      prepareAppend({ format: 'anthropic', messages: [{ role: 'user', content }] }, { countTokens, maxMessageBytes: 2 * 1024 * 1024 });
    expect(run).toThrow(AppError);
    try {
      run();
    } catch (error) {
      expect(error).toMatchObject({ status: 400, field: 'messages.0' });
    }
  });
});
