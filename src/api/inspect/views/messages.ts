import { clip, type Html, html } from '../html.js';
import { fmt } from './layout.js';

/** Characters of one block shown before "N more characters" (the export has the whole text). */
const BLOCK_CHARS = 6000;

export interface ShownMessage {
  seq: number;
  role: string;
  kind: string;
  content: unknown;
  name?: string | null;
  tokens: number;
  pinned?: boolean;
  reason?: string | null;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2) ?? '';
}

function clipped(value: string, max = BLOCK_CHARS): Html {
  const { text: shown, omitted } = clip(value, max);
  return html`<pre class="block-text">${shown}</pre>${omitted > 0 && html`<p class="omitted">… ${fmt(omitted)} more characters (in the export)</p>`}`;
}

function resultText(content: unknown): string {
  if (!Array.isArray(content)) return text(content);
  return content
    .map((part) =>
      part && typeof part === 'object' && (part as { type?: unknown }).type === 'text'
        ? String((part as { text?: unknown }).text ?? '')
        : text(part),
    )
    .join('\n');
}

/** One content block, always as text: a tool call shows its name and input, a tool result its output. */
export function renderBlock(block: unknown, max = BLOCK_CHARS): Html {
  if (!block || typeof block !== 'object') return clipped(text(block), max);
  const b = block as Record<string, unknown>;
  switch (b['type']) {
    case 'text':
      return clipped(String(b['text'] ?? ''), max);
    case 'tool_use':
      return html`<div class="tool-use"><span class="tag">tool call</span> <code>${String(b['name'] ?? '')}</code> <span class="muted">${String(b['id'] ?? '')}</span>${clipped(text(b['input']), max)}</div>`;
    case 'tool_result':
      return html`<div class="tool-result${b['is_error'] === true ? ' error' : ''}"><span class="tag">tool result</span> <span class="muted">${String(b['tool_use_id'] ?? '')}</span>${clipped(resultText(b['content']), max)}</div>`;
    default:
      return html`<div class="other-block"><span class="tag">${String(b['type'] ?? 'block')}</span>${clipped(text(b), 2000)}</div>`;
  }
}

export function renderMessage(message: ShownMessage, options: { idPrefix?: string; max?: number } = {}): Html {
  const blocks = Array.isArray(message.content) ? message.content : [message.content];
  return html`<li class="msg role-${message.role} kind-${message.kind}" id="${options.idPrefix ?? 'seq'}-${message.seq}">
<div class="msg-head"><span class="seq">#${message.seq}</span> <strong>${message.role}</strong>${message.name ? html` <code>${message.name}</code>` : ''}${message.kind !== 'message' && html` <span class="tag">${message.kind}</span>`}${message.pinned && html` <span class="tag">pinned</span>`}${message.reason && html` <span class="tag">${message.reason}</span>`} <span class="muted">${fmt(message.tokens)} tokens</span></div>
${blocks.map((block) => renderBlock(block, options.max))}
</li>`;
}
