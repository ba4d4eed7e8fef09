import { renderAnthropicContext, renderOpenAIContext } from '../compaction/context/index.js';
import type { ProviderCompaction } from '../compaction/types.js';
import type { NativeSpanRow } from '../db/repos/native-span.js';

type Json = Record<string, unknown>;

/**
 * The span of a native compaction in its provider's format (SPEC §5.9), as the agent would
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
    if (opening) openWith(messages, opening.item);
    const system = withClip(agentSystem, context.system);
    return { ...(system === undefined ? {} : { system }), messages };
  }
  const items = responsesItems(renderOpenAIContext(history).messages as unknown as Json[]);
  return { ...(typeof agentSystem === 'string' ? { system: agentSystem } : {}), messages: opening ? [opening.item, ...items] : items };
}

function usableItem(item: ProviderCompaction | null, provider: string, model: string): boolean {
  return item !== null && item.provider === provider && item.model === model;
}

/** The block as the first content block of the first message (Anthropic's placement rule). */
function openWith(messages: Json[], block: Json): void {
  const first = messages[0];
  if (first && first['role'] === 'user' && Array.isArray(first['content'])) first['content'] = [block, ...(first['content'] as unknown[])];
  else messages.unshift({ role: 'user', content: [block] });
}

/** compactd's clip-archive text goes after the agent's own system prompt, which stays first and unchanged. */
function withClip(system: unknown, clip: string | undefined): unknown {
  if (clip === undefined || clip === '') return system;
  if (Array.isArray(system)) return [...(system as unknown[]), { type: 'text', text: clip }];
  if (typeof system === 'string' && system !== '')
    return [
      { type: 'text', text: system },
      { type: 'text', text: clip },
    ];
  return clip;
}

/** Chat-completions messages as Responses input items (messages, function calls, their outputs). */
function responsesItems(messages: readonly Json[]): Json[] {
  const items: Json[] = [];
  for (const message of messages) {
    const role = message['role'];
    const text = textOf(message['content']);
    if (role === 'tool') {
      items.push({ type: 'function_call_output', call_id: message['tool_call_id'], output: text });
      continue;
    }
    if (text !== '') items.push({ role: role === 'system' ? 'developer' : role, content: text });
    const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as Json[]) : [];
    for (const call of calls) {
      const fn = (call['function'] ?? {}) as Json;
      items.push({ type: 'function_call', call_id: call['id'], name: fn['name'], arguments: fn['arguments'] });
    }
  }
  return items;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Json[]).map((part) => (typeof part['text'] === 'string' ? part['text'] : '')).join('\n');
}
