import { openWithCompactionBlock, renderAnthropicContext, renderResponsesContext, systemWithText } from '../compaction/context/index.js';
import type { ProviderCompaction } from '../compaction/types.js';
import type { NativeSpanRow } from '../db/repos/native-span.js';

type Json = Record<string, unknown>;

/**
 * The span of a native compaction in its provider's format (SPEC §5.10), as the agent would
 * send it: the agent's system prompt first, compactd's previous clip-archive after it (as the
 * gateway places it), the messages in order. A previous native item of the same provider and
 * model opens the messages instead of its clip text, byte-exact, as the providers require.
 */
export function nativeMessages(
  provider: 'anthropic' | 'openai',
  model: string,
  agentSystem: unknown,
  rows: readonly NativeSpanRow[],
): { system?: unknown; messages: unknown[] } {
  const opening = rows.find((row) => usableItem(row.providerCompaction, provider, model))?.providerCompaction ?? null;
  const history = rows
    .filter((row) => !(opening && row.providerCompaction === opening))
    .map((row) => ({ role: row.role, content: row.content }));
  if (provider === 'anthropic') {
    const context = renderAnthropicContext(history);
    const messages: Json[] = context.messages;
    if (opening) openWithCompactionBlock(messages, opening.item);
    markCacheBreakpoint(messages);
    const system = systemWithText(agentSystem, context.system);
    return { ...(system === undefined ? {} : { system }), messages };
  }
  const items = renderResponsesContext(history).input;
  return { ...(typeof agentSystem === 'string' ? { system: agentSystem } : {}), messages: opening ? [opening.item, ...items] : items };
}

function usableItem(item: ProviderCompaction | null, provider: string, model: string): boolean {
  return item !== null && item.provider === provider && item.model === model;
}

/**
 * A breakpoint on the last block, as an agent marks its own requests: the provider reads the
 * longest prefix the agent's last request cached (its lookback covers the blocks before the
 * breakpoint), so the conversation is read at the cache price instead of written again.
 */
function markCacheBreakpoint(messages: Json[]): void {
  const last = messages.at(-1);
  const blocks = Array.isArray(last?.['content']) ? (last['content'] as Json[]) : null;
  const block = blocks?.at(-1);
  if (!last || !blocks || !block || block['type'] === 'compaction') return;
  last['content'] = [...blocks.slice(0, -1), { ...block, cache_control: { type: 'ephemeral' } }];
}
