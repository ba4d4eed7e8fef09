import type { ProbeMessage } from './steps.js';

/**
 * What the user said that an agent must still know: the constraints (sentences with must /
 * never / always / don't / do not / make sure …), verbatim, and the first sentence of each
 * of the latest requests. Only text the user typed counts: meta turns, tool output, command
 * notices, observations and system reminders are left out.
 */

export const LATEST_REQUESTS = 3;

const CONSTRAINT = /\b(must|never|always|don'?t|do not|make sure|ensure|avoid|only ever|under no circumstances)\b/i;
// text the client or harness put in a user turn, not typed by the user: notices, observations,
// mini-swe-agent's format and timeout notices and its submitted diff
const NOT_TYPED =
  /^\s*(<(task-notification|command-\w+|local-command-\w+|returncode|output|observation|system-reminder|bash-\w+)\b|\[Request interrupted|Caveat: |This session is being continued|Please always provide EXACTLY ONE action|The last command <command>|diff --git )/i;
// quoted code in a task statement is not something the user asked for
const CODE_LIKE = /^\s*["'`]|^\s*(raise|return|def|class|import|from|assert)\b|[\w\]]\(|[{};]\s*$| = /;
/** a sentence needs a few words to say something checkable ("ok", "continue" do not) */
const MIN_CONSTRAINT_WORDS = 3;
const MIN_REQUEST_WORDS = 2;

/** Text the user typed, one entry per user message that has any, in order. */
export function typedTexts(messages: readonly ProbeMessage[]): string[] {
  const out: string[] = [];
  for (const message of messages) {
    if (message.role !== 'user' || message.metadata?.['isMeta'] === true || message.metadata?.['isCompactSummary'] === true) continue;
    const text = message.content
      .flatMap((b) => (b.type === 'text' ? [b.text] : []))
      .join('\n')
      .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '')
      .replace(/```[\s\S]*?```/g, '')
      .trim();
    if (text.length > 0 && !NOT_TYPED.test(text)) out.push(text);
  }
  return out;
}

/** Sentences of a text: split at line breaks and sentence ends, list markers and tags stripped. */
export function sentences(text: string, minWords = MIN_CONSTRAINT_WORDS): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z`"'(*])/)
    .map((s) =>
      s
        .replace(/^\s*(?:[-*+>]|\d+[.)])\s+/, '')
        .replace(/<\/?[a-z_]+>/gi, '')
        .trim(),
    )
    .filter((s) => s.split(/\s+/).length >= minWords);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The user's constraints, verbatim, first said first. */
export function userConstraints(messages: readonly ProbeMessage[]): string[] {
  return unique(typedTexts(messages).flatMap((text) => sentences(text).filter((s) => CONSTRAINT.test(s) && !CODE_LIKE.test(s))));
}

/**
 * First sentence of each of the latest `count` requests that say something, oldest first.
 * A lead-in ending with a colon ("Consider the following PR description:") introduces the
 * request; the sentence after it is the request's first.
 */
export function latestRequests(messages: readonly ProbeMessage[], count = LATEST_REQUESTS): string[] {
  const firsts = typedTexts(messages).flatMap((text) =>
    sentences(text, MIN_REQUEST_WORDS)
      .filter((s) => !s.endsWith(':'))
      .slice(0, 1),
  );
  return unique(firsts.slice(-count));
}
