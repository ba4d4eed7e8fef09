import type { Block, CountTokens, Role } from './types.js';

/**
 * Token accounting for stored messages. The tokenizer itself (gpt-tokenizer) is passed in
 * by the shell; this module decides *what* is counted, so ingest, planning and the clip-archive
 * agree on one number per message.
 */

/** Per-message framing overhead of chat formats (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Flat charge for an image block; providers bill images by size, which we do not know here. */
export const IMAGE_TOKENS = 1_000;

/** The text of a block as a provider would see it (tool input as JSON). */
export function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'tool_use':
      return `${block.name} ${typeof block.input === 'string' ? block.input : JSON.stringify(block.input ?? {})}`;
    case 'tool_result':
      return typeof block.content === 'string'
        ? block.content
        : block.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
    case 'image':
      return '';
  }
}

function imageCount(block: Block): number {
  if (block.type === 'image') return 1;
  if (block.type === 'tool_result' && typeof block.content !== 'string') {
    return block.content.filter((part) => part.type === 'image').length;
  }
  return 0;
}

/** Tokens of one message: its blocks' text, images at a flat rate, plus framing overhead. */
export function countMessageTokens(message: { role: Role; content: readonly Block[] }, countTokens: CountTokens): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  for (const block of message.content) {
    const text = blockText(block);
    if (text.length > 0) tokens += countTokens(text);
    tokens += imageCount(block) * IMAGE_TOKENS;
  }
  return tokens;
}
