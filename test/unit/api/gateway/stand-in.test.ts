import { describe, expect, it } from 'vitest';

import { clipToFit, STAND_IN_KEY, unstorableStandIn } from '../../../../src/api/gateway/stand-in.js';
import { AppError } from '../../../../src/lib/errors.js';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('unstorableStandIn', () => {
  it('clips a message over the size limit in the middle of its longest texts, marking each cut, until it fits', () => {
    const log = `${'head '.repeat(2_000)}${'x'.repeat(200_000)}${' tail'.repeat(2_000)}`;
    const message = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: log },
        { type: 'text', text: 'short note' },
      ],
    };
    const standIn = unstorableStandIn(message, new AppError('MESSAGE_TOO_LARGE', 'too large', { status: 413 }), 50_000);
    expect(bytes(standIn)).toBeLessThanOrEqual(50_000);
    const clipped = (standIn['content'] as Array<{ content?: string; text?: string }>)[0]!.content!;
    expect(clipped.startsWith('head head')).toBe(true);
    expect(clipped.endsWith('tail tail')).toBe(true);
    expect(clipped).toMatch(/\[… clipped by compactd: \d+ of \d+ characters …\]/);
    expect((standIn['content'] as Array<{ text?: string }>)[1]!.text).toBe('short note');
    expect(standIn['metadata']).toEqual({ [STAND_IN_KEY]: 'clipped' });
  });

  it('stands in a message refused for another reason with a text turn of its role naming why', () => {
    const standIn = unstorableStandIn(
      { role: 'tool', tool_call_id: 'c1', content: 'x' },
      new AppError('DUPLICATE_TOOL_USE_ID', 'tool_use id c1 is already used', { status: 400 }),
      1_000,
    );
    expect(standIn).toEqual({
      role: 'user',
      content: '[message not stored as sent: DUPLICATE_TOOL_USE_ID: tool_use id c1 is already used]',
      metadata: { [STAND_IN_KEY]: 'DUPLICATE_TOOL_USE_ID' },
    });
  });

  it('gives up clipping when only short strings are left', () => {
    const many = { role: 'user', content: Array.from({ length: 2_000 }, (_, i) => ({ type: 'text', text: `line ${i} of a list` })) };
    expect(clipToFit(many, 1_000)).toBeNull();
  });
});
