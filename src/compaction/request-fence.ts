import { neutralizeTags, restoreTags } from './tag-escape.js';
import type { SummarizeMessage } from './types.js';

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
 *   <transcript-ID>
 *   <transcript-context>            optional: the user's latest request, the task state
 *   <transcript-turn role="user">   one per message, in order
 *   <transcript-draft>              a repair's draft summary
 *   <transcript-keep>               "- identifier" lines
 *   </transcript-ID>
 */

export const FENCE_WORD = 'transcript';
const WORDS = [FENCE_WORD] as const;
const ID_PATTERN = /^[0-9a-z]{8,64}$/;

export type FenceSection =
  | { kind: 'context'; text: string }
  | { kind: 'turn'; role: SummarizeMessage['role']; text: string }
  | { kind: 'draft'; text: string }
  | { kind: 'keep'; items: readonly string[] };

export function isFenceId(id: string): boolean {
  return ID_PATTERN.test(id);
}

/** `transcript-ID` with the ID blanked: what two requests that differ only in their fence share. */
export function withoutFenceIds(text: string): string {
  return text.replace(/\btranscript-[0-9a-z]{8,64}\b/g, `${FENCE_WORD}-id`);
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
  const tag = `${FENCE_WORD}-${section.kind}`;
  switch (section.kind) {
    case 'turn':
      return `<${tag} role="${section.role}">\n${escape(section.text)}\n</${tag}>`;
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

const OPEN = new RegExp(`<${FENCE_WORD}-([0-9a-z]{8,64})>\\n`);
const SECTION = new RegExp(`<${FENCE_WORD}-(context|turn|draft|keep)(?: role="(user|assistant|system)")?>\\n([\\s\\S]*?)\\n</${FENCE_WORD}-\\1>`, 'g');

/** Reads a fence back (llm-sim and the local summarizer read requests this way), or null when the text holds none. */
export function readFence(text: string): ReadFence | null {
  const open = OPEN.exec(text);
  if (open === null) return null;
  const id = open[1] as string;
  const close = `\n</${FENCE_WORD}-${id}>`;
  const end = text.indexOf(close, open.index);
  if (end === -1) return null;
  const inner = text.slice(open.index + open[0].length, end);
  const reading: ReadFence = { id, context: null, turns: [], draft: null, keep: [], before: text.slice(0, open.index), after: text.slice(end + close.length) };
  for (const match of inner.matchAll(SECTION)) {
    const content = restoreTags(match[3] ?? '', WORDS);
    switch (match[1]) {
      case 'context':
        reading.context = content;
        break;
      case 'turn':
        reading.turns.push({ role: (match[2] ?? 'user') as SummarizeMessage['role'], content });
        break;
      case 'draft':
        reading.draft = content;
        break;
      case 'keep':
        for (const line of content.split('\n')) if (line.startsWith('- ')) reading.keep.push(line.slice(2));
        break;
    }
  }
  return reading;
}
