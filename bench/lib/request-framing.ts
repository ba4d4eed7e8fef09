import { readFence } from '../../src/compaction/summarize/request-fence.js';
import { countTokens } from '../../src/lib/count-tokens.js';
import type { CallRecord } from '../../src/llm-sim/state.js';

/**
 * What a summarizer request carries besides the conversation it summarizes, read off the body
 * llm-sim kept for the call (Anthropic Messages shape: the system prompt, then one user turn
 * holding instructions, the fence and the directive). Tokens as llm-sim counts them.
 */
export interface RequestFraming {
  system: number;
  /** the stable instructions before the fence */
  instructions: number;
  /** the final directive after it */
  directive: number;
  /** the orientation header (`transcript-context`) */
  header: number;
  /** the identifiers to keep (`transcript-keep`) */
  keep: number;
  /** the excerpt's turns, their text only */
  excerpt: number;
  /** the rest: the fence's own tags, one per turn and the element around them */
  tags: number;
  total: number;
}

export const FRAMING_PARTS = ['system', 'instructions', 'directive', 'header', 'keep', 'tags'] as const;

interface BodyShape {
  system?: string | Array<{ text?: string }>;
  messages?: Array<{ role: string; content: string | Array<{ text?: string }> }>;
}

const textOf = (content: string | Array<{ text?: string }> | undefined): string =>
  typeof content === 'string' ? content : (content ?? []).map((block) => block.text ?? '').join('');

/** The framing of one call, or null when its body is gone or holds no fence. */
export function requestFraming(call: CallRecord): RequestFraming | null {
  const body = call.body as BodyShape | undefined;
  if (body?.messages === undefined) return null;
  const text = body.messages.map((m) => textOf(m.content)).join('\n\n');
  const fence = readFence(text);
  if (fence === null) return null;
  const system = countTokens(textOf(body.system));
  const instructions = countTokens(fence.before);
  const directive = countTokens(fence.after);
  const header = fence.context === null ? 0 : countTokens(fence.context);
  const keep = fence.keep.length === 0 ? 0 : countTokens(fence.keep.map((item) => `- ${item}`).join('\n'));
  const excerpt = fence.turns.reduce((sum, turn) => sum + countTokens(turn.content), 0);
  const tags = call.inputTokens - system - instructions - directive - header - keep - excerpt;
  return { system, instructions, directive, header, keep, excerpt, tags, total: call.inputTokens };
}

/** Per-call means of each part over the calls whose framing could be read. */
export function meanFraming(calls: readonly CallRecord[]): { calls: number; mean: RequestFraming } | null {
  const read = calls.map(requestFraming).filter((f): f is RequestFraming => f !== null);
  if (read.length === 0) return null;
  const mean = (pick: (f: RequestFraming) => number) => read.reduce((sum, f) => sum + pick(f), 0) / read.length;
  return {
    calls: read.length,
    mean: {
      system: mean((f) => f.system),
      instructions: mean((f) => f.instructions),
      directive: mean((f) => f.directive),
      header: mean((f) => f.header),
      keep: mean((f) => f.keep),
      excerpt: mean((f) => f.excerpt),
      tags: mean((f) => f.tags),
      total: mean((f) => f.total),
    },
  };
}
