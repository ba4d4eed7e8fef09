import { describe, expect, it } from 'vitest';

import { findInvalidText, normalizeMessages } from '../../../src/compaction/normalize.js';

describe('OpenAI tool-call arguments', () => {
  it('keeps arguments whose escapes spell a NUL or a lone surrogate verbatim, so nothing unstorable is stored', () => {
    for (const args of ['{"path":"a\\u0000b"}', '{"a\\u0000":1}', '{"s":"\\ud800"}']) {
      const result = normalizeMessages(
        [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] }],
        'openai',
      );
      if (!result.ok) throw new Error(JSON.stringify(result.issues));
      const block = result.messages[0]?.content[0];
      expect(block).toMatchObject({ type: 'tool_use', input: args });
      expect(findInvalidText(result.messages, 'messages')).toBeUndefined();
    }
  });

  it('parses clean arguments as before', () => {
    const result = normalizeMessages(
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"path":"src/a.ts"}' } }],
        },
      ],
      'openai',
    );
    expect(result.ok && result.messages[0]?.content[0]).toMatchObject({ type: 'tool_use', input: { path: 'src/a.ts' } });
  });
});
