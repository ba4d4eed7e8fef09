import type { NormalizedMessage } from '../../src/compaction/types.js';
import { seededRandom } from './result.js';

/**
 * Texts a hostile or careless client sends, deterministic for a seed: runs of whitespace (a
 * pasted table, a log padded with blanks) and messages at the maximum message size in the
 * shapes that stress different parts of the product (prose, token-dense logs, one long line).
 */

export type WhitespaceShape = 'spaces' | 'newlines' | 'mixed';

/** `chars` characters of one whitespace shape between two words (a run inside an ordinary message). */
export function whitespaceText(shape: WhitespaceShape, chars: number, seed = 1): string {
  if (shape === 'spaces') return `before${' '.repeat(chars)}after`;
  if (shape === 'newlines') return `before${'\n'.repeat(chars)}after`;
  // whitespace of every kind with punctuation among it, as in a pasted ASCII table
  const alphabet = [' ', ' ', ' ', '\t', '\n', '\r\n', '.', ',', '|', '-', ';', ' ', '\u00a0', '\u3000'];
  const random = seededRandom(seed);
  const parts: string[] = [];
  for (let n = 0; n < chars; n += 1) parts.push(alphabet[Math.floor(random() * alphabet.length)] as string);
  return `before${parts.join('')}after`;
}

export type MaxSizeShape = 'prose' | 'logs' | 'long-line';

/** A made-up word the searches look for; it occurs throughout every max-size text. */
export const NEEDLE = 'quokkaberry';

const WORDS = (
  'the service answered every request after the migration finished and the team checked each tenant archive for missing ' +
  'records before the release while the queue drained slowly because one worker kept retrying a failed step with backoff'
).split(' ');

/** Pieces of one shape, endless; each piece is ASCII. */
function* pieces(shape: MaxSizeShape, seed: number): Generator<string> {
  const random = seededRandom(seed);
  const hex = () =>
    Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  for (let i = 0; ; i += 1) {
    if (shape === 'prose') {
      // sentences of common words, the needle about once per 200 words
      const words = Array.from({ length: 12 }, () => WORDS[Math.floor(random() * WORDS.length)] as string);
      if (i % 16 === 0) words[5] = NEEDLE;
      yield `${words.join(' ')}. ${i % 8 === 7 ? '\n\n' : ''}`;
    } else if (shape === 'logs') {
      // a log line of short, mostly unique tokens: timestamps, hex ids, key=value pairs
      const level = i % 50 === 0 ? `ERROR ${NEEDLE}` : 'INFO';
      yield (
        `2026-11-25T08:${String(i % 60).padStart(2, '0')}:${String((i * 7) % 60).padStart(2, '0')}.${String(i % 1000).padStart(3, '0')}Z ${level} ` +
        `svc=${hex()} req=${hex()}-${hex()} span=${hex()} k${i % 97}=v${i % 13} ms=${Math.floor(random() * 5000)}\n`
      );
    } else {
      // no whitespace at all: key=value pairs separated by punctuation, a minified blob
      yield `${i % 40 === 0 ? `tag=${NEEDLE};` : ''}k${i}=${hex()},${hex()};`;
    }
  }
}

/** Bytes a message takes where the API measures it (its JSON). */
export const messageBytes = (message: NormalizedMessage): number => Buffer.byteLength(JSON.stringify(message), 'utf8');

/** A message of `shape` whose JSON is at most `maxBytes` and within a piece of it. */
export function maxSizeMessage(shape: MaxSizeShape, maxBytes: number, seed = 1, role: 'user' | 'assistant' = 'user'): NormalizedMessage {
  const overhead = messageBytes({ role, content: [{ type: 'text', text: '' }] });
  const budget = maxBytes - overhead;
  const parts: string[] = [];
  let used = 0;
  for (const piece of pieces(shape, seed)) {
    // ASCII only: a piece's JSON-escaped length is its cost in bytes (a newline costs two)
    const cost = JSON.stringify(piece).length - 2;
    if (used + cost > budget) break;
    parts.push(piece);
    used += cost;
  }
  const message: NormalizedMessage = { role, content: [{ type: 'text', text: parts.join('') }] };
  if (messageBytes(message) > maxBytes) throw new Error(`${shape} message is ${messageBytes(message)} bytes, over ${maxBytes}`);
  return message;
}

/** Short turns around the big message, so a compaction has ordinary messages to keep and to archive. */
export function smallTurn(i: number, topic: string): NormalizedMessage {
  return i % 2 === 0
    ? { role: 'user', content: [{ type: 'text', text: `Turn ${i}: please look at the ${topic} and tell me what you find.` }] }
    : { role: 'assistant', content: [{ type: 'text', text: `Turn ${i}: I read the ${topic}; nothing unusual so far.` }] };
}
