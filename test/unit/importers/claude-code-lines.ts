/**
 * Builders for hand-made Claude Code session lines, shaped like the real ones: one content
 * block per assistant line, tool results as separate user lines, progress and system noise.
 */
const session = 'sess-0001';
let counter = 0;

function base(extra: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    parentUuid: null,
    isSidechain: false,
    sessionId: session,
    version: '2.1.39',
    uuid: `u-${counter}`,
    timestamp: '2026-02-01T10:00:00.000Z',
    ...extra,
  };
}

export const line = {
  user: (content: unknown, extra: Record<string, unknown> = {}) => base({ type: 'user', message: { role: 'user', content }, ...extra }),
  assistant: (id: string, block: unknown, extra: Record<string, unknown> = {}) =>
    base({ type: 'assistant', message: { id, role: 'assistant', model: 'claude-opus-4-6', content: [block] }, ...extra }),
  result: (toolUseId: string, content: unknown, extra: Record<string, unknown> = {}) =>
    base({
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content }] },
      toolUseResult: {},
      ...extra,
    }),
  progress: () => base({ type: 'progress', data: { type: 'hook_progress', hookEvent: 'PostToolUse' } }),
  snapshot: () => ({ type: 'file-history-snapshot', messageId: 'm-1', snapshot: {}, isSnapshotUpdate: false }),
  queue: () => base({ type: 'queue-operation', operation: 'enqueue' }),
  system: (subtype: string, extra: Record<string, unknown> = {}) => base({ type: 'system', subtype, content: '', ...extra }),
  boundary: (trigger: string, preTokens: number) =>
    base({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger, preTokens } }),
};

export const block = {
  text: (text: string) => ({ type: 'text', text }),
  thinking: (thinking: string) => ({ type: 'thinking', thinking, signature: '[REDACTED_SIGNATURE]' }),
  toolUse: (id: string, name: string, input: unknown = {}) => ({ type: 'tool_use', id, name, input, caller: { type: 'direct' } }),
};

export const jsonl = (lines: unknown[]): string => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
