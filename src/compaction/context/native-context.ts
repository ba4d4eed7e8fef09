import type { Block, MessageKind, NativeClip, Role } from '../types.js';
import { type AnthropicContext, renderAnthropicContext } from './render-context.js';

/** An active message as the context route reads it: a native clip-archive carries its provider item. */
export interface ContextRow {
  role: Role;
  /** only a clip-archive's item opens the context: a provider item the client sent stays the client's own turn */
  kind?: MessageKind;
  content: Block[];
  native?: NativeClip | null;
}

/**
 * The Anthropic context of a history whose clip-archive came from the provider's own
 * compaction (SPEC §5.10): the compaction block, exactly as returned, opens the messages (the
 * first content block of the first message, Anthropic's placement rule), compactd's state (the
 * ledger) joins the system prompt, and the beta header the block needs is named. Only for the
 * model that made the block: asked for another model (`model` given and different), or with no
 * native clip, the context is compactd's own, its clip-archive in the system prompt.
 */
export function renderAnthropicContextWithNative(
  rows: readonly ContextRow[],
  model?: string,
): { context: AnthropicContext; beta: string | null } {
  const clip = rows.find((row) => row.kind === 'clip_archive' && row.native && row.native.compaction.provider === 'anthropic');
  const native = clip?.native;
  if (!native || (model !== undefined && model !== native.compaction.model)) return { context: renderAnthropicContext(rows), beta: null };
  const history = rows.flatMap((row): Array<Pick<ContextRow, 'role' | 'content'>> => {
    if (row !== clip) return [row];
    return native.state === '' ? [] : [{ role: 'system', content: [{ type: 'text', text: native.state }] }];
  });
  const context = renderAnthropicContext(history);
  openWithCompactionBlock(context.messages, native.compaction.item);
  return { context, beta: native.compaction.beta };
}

/**
 * Anthropic's placement rule for a provider compaction block: the first content block of the
 * first message. The first message object is replaced by a copy, never changed (it may be the
 * client's own, which the gateway forwards as it came).
 */
export function openWithCompactionBlock(messages: Array<Record<string, unknown>>, block: Record<string, unknown>): void {
  const first = messages[0];
  if (first && first['role'] === 'user') messages[0] = { ...first, content: [block, ...asBlocks(first['content'])] };
  else messages.unshift({ role: 'user', content: [block] });
}

/** compactd's text (the clip-archive, or the state beside a native block) after the agent's system prompt, which stays first and unchanged. */
export function systemWithText(system: unknown, text: string | undefined): unknown {
  if (text === undefined || text === '') return system;
  if (Array.isArray(system)) return [...(system as unknown[]), { type: 'text', text }];
  if (typeof system === 'string' && system !== '')
    return [
      { type: 'text', text: system },
      { type: 'text', text },
    ];
  return text;
}

const asBlocks = (content: unknown): unknown[] =>
  Array.isArray(content) ? content : typeof content === 'string' ? [{ type: 'text', text: content }] : [];
