import { extractIdentifiers, findMissingIdentifiers } from '../src/compaction/summarize/index.js';
import type { EvalMessage } from './metrics.js';

/**
 * Coverage of what the user said. An explicit instruction is a sentence of a user message
 * with must / never / always / don't / do not / please; a request is a whole user message.
 * Either is covered when the context holds it verbatim, or holds its identifiers verbatim
 * and most of its key content words close together (within a few lines): a paraphrase
 * counts, words scattered over a long context do not.
 */

export interface UserStatement {
  text: string;
  /** index of the user message among the span's messages */
  messageIndex: number;
  /** distinctive words, lower case: the longest non-stopwords, at most MAX_KEY_WORDS */
  keyWords: string[];
  /** identifiers of the statement (the core's extractor), at most MAX_IDENTIFIERS */
  identifiers: string[];
}

export interface Coverage {
  covered: number;
  total: number;
  /** covered / total; null when the span has no such statement */
  ratio: number | null;
  missed: string[];
}

const INSTRUCTION = /\b(must|never|always|don'?t|do not|please)\b/i;
const MAX_KEY_WORDS = 8;
const MAX_IDENTIFIERS = 4;
/** share of key words that must appear together */
export const KEY_WORD_SHARE = 0.6;
/** consecutive non-empty context lines the key words may spread over */
export const WINDOW_LINES = 3;
// text the client injected into a user turn, not typed by the user
const NOT_TYPED =
  /^\s*(<(task-notification|command-\w+|local-command-\w+|returncode|output|observation|system-reminder)\b|\[Request interrupted|Caveat: )/i;
const STOPWORDS = new Set(
  (
    'about above after again also another anything because been before being below between both cannot could does doing done down during each ' +
    'either else every from further have having here into itself just like make many more most much must need never only other ought please ' +
    'same should since some still such than that their them then there these they thing things this those through under until upon very want ' +
    'were what when where which while will with within without would your yours always dont shall might'
  ).split(' '),
);

/** Text the user typed: user-role text blocks, without meta turns, injected notices or system reminders. */
export function userTexts(messages: readonly EvalMessage[]): Array<{ messageIndex: number; text: string }> {
  const out: Array<{ messageIndex: number; text: string }> = [];
  messages.forEach((message, messageIndex) => {
    if (message.role !== 'user' || message.metadata?.['isMeta'] === true || message.metadata?.['isCompactSummary'] === true) return;
    const text = message.content
      .flatMap((b) => (b.type === 'text' ? [b.text] : []))
      .join('\n')
      .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '')
      .trim();
    if (text.length > 0 && !NOT_TYPED.test(text)) out.push({ messageIndex, text });
  });
  return out;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}][\p{L}\p{N}_-]*[\p{L}\p{N}]/gu) ?? [];
}

/** The most distinctive words: non-stopwords of four letters or more, longest first, first appearance breaking ties. */
export function keyWords(text: string): string[] {
  const unique = [...new Set(words(text).filter((w) => w.length >= 4 && !STOPWORDS.has(w)))];
  return unique
    .map((word, order) => ({ word, order }))
    .sort((a, b) => b.word.length - a.word.length || a.order - b.order)
    .slice(0, MAX_KEY_WORDS)
    .map((entry) => entry.word);
}

function statement(text: string, messageIndex: number): UserStatement {
  return { text, messageIndex, keyWords: keyWords(text), identifiers: extractIdentifiers(text).slice(0, MAX_IDENTIFIERS) };
}

/** A statement with fewer than two key words and no identifier ("please continue") says nothing to check. */
function checkable(s: UserStatement): boolean {
  return s.keyWords.length >= 2 || s.identifiers.length > 0;
}

function sentencesOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The user's explicit instructions: sentences with must / never / always / don't / please. */
export function explicitInstructions(messages: readonly EvalMessage[]): UserStatement[] {
  return userTexts(messages)
    .flatMap(({ messageIndex, text }) =>
      sentencesOf(text)
        .filter((s) => INSTRUCTION.test(s))
        .map((s) => statement(s, messageIndex)),
    )
    .filter(checkable);
}

/** Every message the user typed, as one statement each. */
export function userRequests(messages: readonly EvalMessage[]): UserStatement[] {
  return userTexts(messages)
    .map(({ messageIndex, text }) => statement(text, messageIndex))
    .filter(checkable);
}

/** A context prepared once for many coverage checks: the normalized text and each line's words. */
export interface IndexedContext {
  text: string;
  lines: Array<ReadonlySet<string>>;
}

export function indexContext(text: string): IndexedContext {
  const lines = text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => new Set(words(line)));
  return { text, lines };
}

/**
 * Whether the context holds the statement verbatim (whitespace aside), or else its
 * identifiers and enough of its key words within one window of lines.
 */
export function isCovered(s: UserStatement, context: IndexedContext): boolean {
  if (findMissingIdentifiers([s.text], context.text).length === 0) return true;
  if (findMissingIdentifiers(s.identifiers, context.text).length > 0) return false;
  const needed = Math.ceil(s.keyWords.length * KEY_WORD_SHARE);
  if (needed === 0) return true;
  for (let start = 0; start < context.lines.length; start += 1) {
    const window = context.lines.slice(start, start + WINDOW_LINES);
    const present = s.keyWords.filter((w) => window.some((line) => line.has(w))).length;
    if (present >= needed) return true;
  }
  return false;
}

export function coverage(statements: readonly UserStatement[], context: IndexedContext): Coverage {
  const missed = statements.filter((s) => !isCovered(s, context)).map((s) => s.text);
  const covered = statements.length - missed.length;
  return { covered, total: statements.length, ratio: statements.length === 0 ? null : covered / statements.length, missed };
}
