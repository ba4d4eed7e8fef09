import type { SummarizeMessage } from '../types.js';
import { FOCUS_PREFIX, IDENTIFIERS_TO_KEEP_INTRO, withoutInstructions } from './prompt.js';
import { readFence } from './request-fence.js';

/**
 * A summarizer request read back into its parts, the way the local summarizer and llm-sim
 * read what they are sent: the turns to summarize (a repair's draft as one turn), the
 * orientation context, the identifiers asked for, the focus. Requests are read whatever the
 * adapter made of them (Anthropic merges consecutive user messages into one turn). A
 * request without a fence (a hand-written one) is read the older way: the last user message
 * is the directive, the others are the excerpt.
 */

export interface RequestReading {
  body: SummarizeMessage[];
  context: string | null;
  /** identifiers the request asks the summary to keep verbatim */
  keep: string[];
  focus: string | null;
}

interface AnyMessage {
  role: string;
  content: string;
}

function focusIn(directive: string): string | null {
  const line = directive.split('\n').find((text) => text.startsWith(FOCUS_PREFIX));
  return line === undefined ? null : line.slice(FOCUS_PREFIX.length);
}

function listAfter(directive: string, intro: string): string[] {
  const lines = directive.split('\n');
  const start = lines.indexOf(intro);
  const items: string[] = [];
  for (let i = start + 1; start !== -1 && i < lines.length; i += 1) {
    const line = lines[i] as string;
    if (!line.startsWith('- ')) break;
    items.push(line.slice(2).trim());
  }
  return items;
}

function asSummarizeRole(role: string): SummarizeMessage['role'] {
  return role === 'assistant' || role === 'system' ? role : 'user';
}

export function readRequest(messages: readonly AnyMessage[]): RequestReading {
  const turns = messages.filter((m) => m.role !== 'system');
  const fence = readFence(turns.map((m) => m.content).join('\n\n'));
  if (fence !== null) {
    const body = fence.draft === null ? fence.turns : [...fence.turns, { role: 'assistant' as const, content: fence.draft }];
    return { body: body.filter((m) => m.content.trim().length > 0), context: fence.context, keep: fence.keep, focus: focusIn(fence.after) };
  }
  const rest = turns
    .map((m) => ({ role: asSummarizeRole(m.role), content: withoutInstructions(m.content) }))
    .filter((m) => m.content.trim().length > 0);
  const last = rest[rest.length - 1];
  const hasDirective = last?.role === 'user' && rest.length > 1;
  const directive = hasDirective ? last.content : '';
  return {
    body: hasDirective ? rest.slice(0, -1) : rest,
    context: null,
    keep: listAfter(directive, IDENTIFIERS_TO_KEEP_INTRO),
    focus: focusIn(directive),
  };
}
