import { describe, expect, it } from 'vitest';

import { historyKey, planSync, storableMessage } from '../../../../src/api/gateway/history.js';
import {
  clipAlignedKeys,
  clipPosition,
  lastProviderClip,
  providerOnlyReason,
  withProviderClip,
} from '../../../../src/api/gateway/provider-clip.js';
import type { StoredKeys } from '../../../../src/db/repos/gateway-history.js';

const block = { type: 'compaction', content: 'Summary.', signature: 'simsig1.a.b' };
const clipMessage = { role: 'assistant', content: [block] };
const keyOf = (position: number, message: unknown) => historyKey(position, storableMessage('anthropic', message));

describe('providerOnlyReason', () => {
  it('names the requests only the provider can serve as sent', () => {
    expect(providerOnlyReason('anthropic', { compaction: { type: 'summarize' } }, [])).toBe('provider-compaction');
    expect(providerOnlyReason('anthropic', { context_management: { edits: [{ type: 'compact_20260112' }] } }, [])).toBe(
      'provider-compaction',
    );
    // Claude Code's context_management only clears old tool results and thinking: compactd compacts as before
    expect(
      providerOnlyReason(
        'anthropic',
        { context_management: { edits: [{ type: 'clear_tool_uses_20250919' }, { type: 'clear_thinking_20251015' }] } },
        [],
      ),
    ).toBeNull();
    expect(providerOnlyReason('anthropic', { context_management: { edits: [] } }, [])).toBeNull();
    expect(providerOnlyReason('responses', {}, [{ role: 'user', content: 'x' }, { type: 'compaction_trigger' }])).toBe(
      'provider-compaction',
    );
    expect(providerOnlyReason('responses', { previous_response_id: 'resp_1' }, [])).toBe('previous-response-id');
    expect(providerOnlyReason('responses', {}, [{ type: 'item_reference', id: 'msg_1' }])).toBe('previous-response-id');
    expect(providerOnlyReason('openai', { compaction: null }, [])).toBeNull();
    expect(providerOnlyReason('responses', {}, [{ role: 'user', content: 'x' }])).toBeNull();
  });
});

describe('lastProviderClip', () => {
  it('finds the last compaction block or item, never a failed one', () => {
    expect(lastProviderClip('anthropic', [clipMessage, { role: 'user', content: 'go on' }])).toBe(0);
    expect(lastProviderClip('anthropic', [{ role: 'assistant', content: [{ type: 'compaction', content: null }] }])).toBeNull();
    expect(
      lastProviderClip('responses', [
        { role: 'user', content: 'a' },
        { type: 'compaction', encrypted_content: 'e' },
        { role: 'user', content: 'b' },
      ]),
    ).toBe(1);
    expect(lastProviderClip('openai', [clipMessage])).toBeNull();
  });
});

describe('clip alignment', () => {
  const stored = (entries: Array<[number, string]>, activeFrom: number): StoredKeys => ({ keys: new Map(entries), activeFrom });

  it('matches a history opening with a stored clip from the clip on: what follows is appended', () => {
    // positions 0-2 left the active history when the clip was stored at 3 (rewound: no key left)
    const keys = stored([[3, keyOf(3, clipMessage)]], 3);
    const at = clipPosition(keys, keyOf(0, clipMessage));
    expect(at).toBe(3);
    const client = clipAlignedKeys(at, [keyOf(3, clipMessage), keyOf(4, { role: 'user', content: 'next' })]);
    expect(planSync(client, withProviderClip(keys, at))).toEqual({ kind: 'extend', fromPosition: 4 });
    // without the alignment the same history would be another thread
    expect(planSync([keyOf(0, clipMessage)], keys)).toEqual({ kind: 'other-thread' });
  });

  it('appends a clip compactd has not seen after the stored history', () => {
    const keys = stored(
      [
        [0, keyOf(0, { role: 'user', content: 'a' })],
        [1, keyOf(1, { role: 'assistant', content: 'b' })],
      ],
      0,
    );
    const at = clipPosition(keys, keyOf(0, clipMessage));
    expect(at).toBe(2);
    expect(planSync(clipAlignedKeys(at, [keyOf(2, clipMessage)]), withProviderClip(keys, at))).toEqual({
      kind: 'extend',
      fromPosition: 2,
    });
  });
});
