import { neutralizeTags, restoreTags } from '../tag-escape.js';
import type { SummarizeMessage } from '../types.js';

/**
 * The fence around everything of a summarizer request that comes from the conversation
 * (SPEC §8: the transcript reaches the summarizer fenced as data). One element, opened by
 * `<transcript-ID>` and closed by `</transcript-ID>`, where ID is random per request (the
 * worker draws it; the core takes it as an argument). Inside it, tagged sections: the
 * orientation context, the turns with their speaker, the draft of a repair, the identifiers
 * to keep. Nothing inside can close the fence or open a section: every '<' that reads as
 * `<transcript…` or `</transcript…` in the content — look-alike letters, fullwidth forms,
 * invisible characters between them — is written `&lt;` (tag-escape.ts), so the real tags
 * are the only ones a reader sees, and the content cannot even guess the ID to some effect.
 *
 * A turn is opened by its speaker's tag and runs to the next tag: since no content can hold
 * a tag, the next one ends it as surely as a closing tag would, at half the tokens (a chunk
 * request has one turn per message, so its tags are the fence's main cost).
 *
 *   <transcript-ID>
 *   <transcript-context>            optional: the user's latest request, the task state; closed
 *   <transcript-user>               one per message, in order (or -assistant, -system); not closed
 *   <transcript-draft>              a repair's draft summary; closed
 *   <transcript-keep>               "- identifier" lines; closed
 *   </transcript-ID>
 */

export const FENCE_WORD = 'transcript';
const WORDS = [FENCE_WORD] as const;
const ID_PATTERN = /^[0-9a-z]{8,64}$/;
/** Section tag names, which an ID of the same letters would be confused with. */
const SECTION_NAMES = ['context', 'draft', 'keep', 'user', 'assistant', 'system'] as const;
const NOT_A_SECTION = `(?!(?:${SECTION_NAMES.join('|')})\\b)`;

export type FenceSection =
  | { kind: 'context'; text: string }
  | { kind: 'turn'; role: SummarizeMessage['role']; text: string }
  | { kind: 'draft'; text: string }
  | { kind: 'keep'; items: readonly string[] };

export function isFenceId(id: string): boolean {
  return ID_PATTERN.test(id) && !(SECTION_NAMES as readonly string[]).includes(id);
}

const FENCE_ID_TAG = new RegExp(`\\b${FENCE_WORD}-${NOT_A_SECTION}[0-9a-z]{8,64}\\b`, 'g');

/** `transcript-ID` with the ID blanked: what two requests that differ only in their fence share. */
export function withoutFenceIds(text: string): string {
  return text.replace(FENCE_ID_TAG, `${FENCE_WORD}-id`);
}

/**
 * A fence ID derived from the fenced texts, for callers without randomness (tests, the
 * bench's peers). Content cannot aim at it: it would have to contain its own hash.
 */
export function contentFenceId(texts: readonly string[]): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ texts.length;
  for (const text of texts) {
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x5bd1e995) ^ (b >>> 13);
    }
    a = Math.imul(a ^ 0xff, 0x01000193);
  }
  return `${(a >>> 0).toString(16).padStart(8, '0')}${(b >>> 0).toString(16).padStart(8, '0')}`;
}

const escape = (text: string) => neutralizeTags(text, WORDS);

function renderSection(section: FenceSection): string {
  if (section.kind === 'turn') return `<${FENCE_WORD}-${section.role}>\n${escape(section.text)}`;
  const tag = `${FENCE_WORD}-${section.kind}`;
  switch (section.kind) {
    case 'keep':
      return `<${tag}>\n${section.items.map((item) => `- ${escape(item.replace(/\s+/g, ' ').trim())}`).join('\n')}\n</${tag}>`;
    default:
      return `<${tag}>\n${escape(section.text)}\n</${tag}>`;
  }
}

/** The fenced data: one element whose content cannot close it. */
export function renderFence(id: string, sections: readonly FenceSection[]): string {
  if (!isFenceId(id)) throw new Error(`fence id must match ${ID_PATTERN}: got ${JSON.stringify(id)}`);
  return [`<${FENCE_WORD}-${id}>`, ...sections.map(renderSection), `</${FENCE_WORD}-${id}>`].join('\n');
}

export interface ReadFence {
  id: string;
  context: string | null;
  turns: SummarizeMessage[];
  draft: string | null;
  keep: string[];
  /** the request text before the fence (instructions) and after it (the directive) */
  before: string;
  after: string;
}

const OPEN = new RegExp(`<${FENCE_WORD}-${NOT_A_SECTION}([0-9a-z]{8,64})>\\n`);
const TAG = new RegExp(`<${FENCE_WORD}-(${SECTION_NAMES.join('|')})>\\n`, 'y');
const NEXT_TAG = `\n<${FENCE_WORD}-`;

/** Reads a fence back (llm-sim and the local summarizer read requests this way), or null when the text holds none. */
export function readFence(text: string): ReadFence | null {
  const open = OPEN.exec(text);
  if (open === null) return null;
  const id = open[1] as string;
  const close = `\n</${FENCE_WORD}-${id}>`;
  const end = text.indexOf(close, open.index);
  if (end === -1) return null;
  const inner = text.slice(open.index + open[0].length, end);
  const reading: ReadFence = {
    id,
    context: null,
    turns: [],
    draft: null,
    keep: [],
    before: text.slice(0, open.index),
    after: text.slice(end + close.length),
  };
  let at = 0;
  while (at < inner.length) {
    TAG.lastIndex = at;
    const tag = TAG.exec(inner);
    if (tag === null) break;
    const kind = tag[1] as (typeof SECTION_NAMES)[number];
    const from = at + tag[0].length;
    if (kind === 'user' || kind === 'assistant' || kind === 'system') {
      // a turn runs to the next tag (no content can hold one) or to the fence's end
      const next = inner.indexOf(NEXT_TAG, from);
      const to = next === -1 ? inner.length : next;
      reading.turns.push({ role: kind, content: restoreTags(inner.slice(from, to), WORDS) });
      at = to + 1;
      continue;
    }
    const closing = `\n</${FENCE_WORD}-${kind}>`;
    const to = inner.indexOf(closing, from);
    if (to === -1) break;
    readClosedSection(reading, kind, restoreTags(inner.slice(from, to), WORDS));
    at = to + closing.length + 1;
  }
  return reading;
}

function readClosedSection(reading: ReadFence, kind: 'context' | 'draft' | 'keep', content: string): void {
  switch (kind) {
    case 'context':
      reading.context = content;
      break;
    case 'draft':
      reading.draft = content;
      break;
    case 'keep':
      for (const line of content.split('\n')) if (line.startsWith('- ')) reading.keep.push(line.slice(2));
      break;
  }
}
