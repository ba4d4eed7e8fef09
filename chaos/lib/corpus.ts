import { listRealTranscripts, loadRealTranscript } from '../../harness/transcripts.js';
import type { NormalizedMessage } from '../../src/compaction/types.js';

/**
 * Conversations for the suites, all from the shared real transcripts (read at run time,
 * never copied into the repository): the tau-bench airline dialogues whole, and windows of
 * the long Claude Code sessions and SWE-bench trajectories. A window starts on a message
 * that answers no tool call, so it never opens with an orphaned tool result.
 */

export interface CorpusConversation {
  /** where it came from: file and window */
  source: string;
  messages: NormalizedMessage[];
}

const answersToolCall = (m: NormalizedMessage) => m.content.some((b) => b.type === 'tool_result');

/** Windows of `length` messages, `stride` apart, each starting at a unit boundary. */
function windows(messages: readonly NormalizedMessage[], length: number, stride: number): Array<[number, NormalizedMessage[]]> {
  const out: Array<[number, NormalizedMessage[]]> = [];
  for (let start = 0; start + length <= messages.length; start += stride) {
    let from = Math.max(start, (out.at(-1)?.[0] ?? -length) + length);
    while (from < messages.length && (answersToolCall(messages[from] as NormalizedMessage) || messages[from]?.role === 'system')) from += 1;
    if (from + length > messages.length) break;
    out.push([from, messages.slice(from, from + length)]);
  }
  return out;
}

let cached: { dialogues: CorpusConversation[]; sessions: CorpusConversation[] } | null = null;

function load() {
  if (cached) return cached;
  const dialogues: CorpusConversation[] = [];
  const sessions: CorpusConversation[] = [];
  for (const file of listRealTranscripts()) {
    if (file.name.includes('/subagents/')) continue;
    const imported = loadRealTranscript(file.path).conversations;
    if (file.format === 'tau-bench') {
      imported.forEach((c, i) => {
        if (c.messages.length >= 24) dialogues.push({ source: `${file.name}#${i}`, messages: c.messages });
      });
      continue;
    }
    const messages = imported[0]?.messages ?? [];
    // Windows never overlap: two conversations must not share a chunk (the suites match LLM calls by request).
    for (const [from, window] of windows(messages, 80, 80)) sessions.push({ source: `${file.name}@${from}`, messages: window });
  }
  cached = { dialogues, sessions };
  return cached;
}

/** Long non-system messages of a conversation (what could make two summarizer requests identical). */
function fingerprints(conversation: CorpusConversation): string[] {
  return conversation.messages
    .filter((m) => m.role !== 'system')
    .map((m) => JSON.stringify(m.content))
    .filter((text) => text.length >= 400);
}

/**
 * `count` distinct conversations, about one in `sessionEvery` a long-session window (many
 * chunks, big tool outputs), the rest dialogues. Deterministic for a given count. No two
 * share a long non-system message (some dialogues replay the same task): the suites tell
 * steps apart by their summarizer requests, which must therefore differ between conversations.
 */
export function pickConversations(count: number, sessionEvery = 4): CorpusConversation[] {
  const { dialogues, sessions } = load();
  const out: CorpusConversation[] = [];
  const used = new Set<string>();
  const take = (pool: CorpusConversation[], cursor: { i: number }): boolean => {
    while (cursor.i < pool.length) {
      const candidate = pool[cursor.i++] as CorpusConversation;
      const prints = fingerprints(candidate);
      if (prints.some((p) => used.has(p))) continue;
      prints.forEach((p) => used.add(p));
      out.push(candidate);
      return true;
    }
    return false;
  };
  const d = { i: 0 };
  const s = { i: 0 };
  for (let i = 0; i < count; i++) {
    const wantSession = i % sessionEvery === sessionEvery - 1;
    const ok = wantSession ? take(sessions, s) || take(dialogues, d) : take(dialogues, d) || take(sessions, s);
    if (!ok) throw new Error(`the shared transcripts hold only ${out.length} distinct conversations, ${count} asked`);
  }
  return out;
}

/** Short user/assistant turns to append while compactions run (plain text, no tool calls). */
export function liveTurn(i: number): NormalizedMessage {
  return i % 2 === 0
    ? { role: 'user', content: [{ type: 'text', text: `Follow-up ${i}: please also check src/module${i % 17}.ts and report any error.` }] }
    : {
        role: 'assistant',
        content: [{ type: 'text', text: `Checked src/module${(i - 1) % 17}.ts: no error found, all tests pass (run ${i}).` }],
      };
}
