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
  const messages = context.messages as Array<{ role: 'user' | 'assistant'; content: unknown[] }>;
  const first = messages[0];
  if (first && first.role === 'user') first.content = [native.compaction.item, ...first.content];
  else messages.unshift({ role: 'user', content: [native.compaction.item] });
  return { context, beta: native.compaction.beta };
}
