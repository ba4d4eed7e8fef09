import { countTokens } from '../../../src/lib/count-tokens.js';
import { contentText } from '../../../src/llm-sim/types.js';

/**
 * Tokens of a request as llm-sim counts them (completion.ts): each message's text (blocks
 * joined by newlines, a tool call as its name and JSON input) plus 4, the system prompt
 * counting as one message. The agent checks its window with the provider's own count, so a
 * context "over the window" is one the provider would refuse. Counts are memoized per
 * message object, and per serialized message for contexts read anew each turn.
 */

export const MESSAGE_OVERHEAD_TOKENS = 4;

export interface SimMessage {
  role: string;
  content: unknown;
}

export class SimCounter {
  private readonly byObject = new WeakMap<object, number>();
  private readonly byText = new Map<string, number>();

  /** One message, memoized by identity (the transcript's messages are counted once). */
  message(message: SimMessage): number {
    const known = this.byObject.get(message);
    if (known !== undefined) return known;
    const tokens = countTokens(contentText(message.content)) + MESSAGE_OVERHEAD_TOKENS;
    this.byObject.set(message, tokens);
    return tokens;
  }

  /** One message read from an API answer (a new object each time): memoized by its JSON. */
  serialized(message: SimMessage): number {
    const key = JSON.stringify(message.content);
    const known = this.byText.get(key);
    if (known !== undefined) return known;
    const tokens = countTokens(contentText(message.content)) + MESSAGE_OVERHEAD_TOKENS;
    this.byText.set(key, tokens);
    return tokens;
  }

  system(system: string): number {
    return system === '' ? 0 : countTokens(system) + MESSAGE_OVERHEAD_TOKENS;
  }

  /** A whole request: the system prompt and the messages, as the sim's `inputTokens`. */
  request(system: string, messages: readonly SimMessage[], readFresh = false): number {
    return messages.reduce((sum, m) => sum + (readFresh ? this.serialized(m) : this.message(m)), this.system(system));
  }
}

/** The text tokens of an answer (what `max_tokens` bounds): no per-message overhead. */
export function answerTokens(messages: readonly SimMessage[]): number {
  return messages.reduce((sum, m) => sum + countTokens(contentText(m.content)), 0);
}
