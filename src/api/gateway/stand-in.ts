import type { AppError } from '../../lib/errors.js';

type Json = Record<string, unknown>;

/** Metadata key of a message the gateway stored in place of one it could not store as sent. */
export const STAND_IN_KEY = 'gatewayStandIn';

/** Strings at most this long are never clipped: the size comes from the long ones. */
const CLIP_FLOOR = 256;

/**
 * What the gateway stores for a message compactd refused as sent (the provider still gets the
 * client's own message: only the stored copy differs). Over the size limit: the message with
 * its longest texts clipped in the middle, each cut marked, until it fits. Any other refusal
 * (a shape normalization refuses, a tool id the conversation already used): a text turn of the
 * same role naming why. Either way its metadata says so (`gatewayStandIn`), so a reader of the
 * archive or the export can tell it from what the client sent.
 */
export function unstorableStandIn(storable: Json, error: AppError, maxBytes: number): Json {
  if (error.status === 413) {
    const clipped = clipToFit(storable, maxBytes);
    if (clipped) return { ...clipped, metadata: { [STAND_IN_KEY]: 'clipped' } };
  }
  const role = storable['role'] === 'assistant' ? 'assistant' : 'user';
  return { role, content: `[message not stored as sent: ${error.code}: ${error.message}]`, metadata: { [STAND_IN_KEY]: error.code } };
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** `value` with its longest strings clipped until its JSON fits `maxBytes` (a margin left for metadata), or null when it cannot. */
export function clipToFit(value: Json, maxBytes: number): Json | null {
  const budget = Math.floor(maxBytes * 0.9);
  let copy = structuredClone(value);
  for (let round = 0; round < 64; round += 1) {
    const size = bytesOf(copy);
    if (size <= budget) return copy;
    const longest = longestString(copy);
    if (!longest || longest.text.length <= CLIP_FLOOR) return null;
    const excess = size - budget;
    // cut at least the excess (bytes ≥ characters), keeping the head and the tail of the text
    const keep = Math.max(CLIP_FLOOR, longest.text.length - excess - 64);
    const head = longest.text.slice(0, Math.ceil(keep / 2));
    const tail = longest.text.slice(longest.text.length - Math.floor(keep / 2));
    longest.set(`${head}\n[… clipped by compactd: ${longest.text.length - keep} of ${longest.text.length} characters …]\n${tail}`);
    copy = { ...copy };
  }
  return null;
}

function longestString(root: Json): { text: string; set(text: string): void } | null {
  let best: { text: string; set(text: string): void } | null = null;
  const stack: Array<Json | unknown[]> = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Json;
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (typeof child === 'string') {
        if (!best || child.length > best.text.length) best = { text: child, set: (text) => (node[key] = text) };
      } else if (typeof child === 'object' && child !== null) stack.push(child as Json);
    }
  }
  return best;
}
