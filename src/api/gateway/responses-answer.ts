import { itemType, RESPONSES_COMPACTION_TYPES } from './provider-clip.js';

/**
 * The answer of a Responses API call as the client sends it back: the response's `output`
 * items, in order (reasoning, messages, function calls). When the output holds a provider's
 * compaction (a `compaction_trigger` request's answer: the kept user messages, then the item),
 * the client's next history opens with those items and the stored history is clipped at the
 * item (provider-clip.ts): only the item and what follows it are stored.
 */

type Json = Record<string, unknown>;

/** answer.ts `Answer` (not imported: answer.ts dispatches to this file) */
interface ResponsesAnswer {
  messages: Json[];
  inputTokens: number | undefined;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `input_tokens` counts the cached part too: the whole prompt, what the auto trigger compares with the window. */
const inputTokensOf = (usage: unknown): number | undefined =>
  isObject(usage) && typeof usage['input_tokens'] === 'number' ? usage['input_tokens'] : undefined;

/** The items of an output the gateway stores: from its last compaction item on, when it holds one. */
export function storedOutputItems(output: readonly unknown[]): Json[] {
  const items = output.filter(isObject);
  let clip = -1;
  items.forEach((item, index) => {
    if (RESPONSES_COMPACTION_TYPES.has(itemType(item))) clip = index;
  });
  return clip === -1 ? items : items.slice(clip);
}

/** The answer of a non-streamed `POST /responses`; null when the body is not a response. */
export function responsesAnswerFromJson(body: unknown): ResponsesAnswer | null {
  if (!isObject(body) || !Array.isArray(body['output'])) return null;
  if (body['status'] === 'failed' || body['status'] === 'cancelled') return null;
  const messages = storedOutputItems(body['output']);
  return messages.length === 0 ? null : { messages, inputTokens: inputTokensOf(body['usage']) };
}

/**
 * Rebuilds a Responses stream into its answer. `response.completed` (or `response.incomplete`,
 * an answer cut at max_output_tokens, which the client keeps) carries the whole response; the
 * items of `response.output_item.done` stand in when a provider leaves `output` empty there.
 */
export function responsesStreamAccumulator(): { onData(data: string): void; result(): ResponsesAnswer | null } {
  const done: Json[] = [];
  let final: Json | null = null;
  let failed = false;
  return {
    onData(data) {
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        return;
      }
      if (!isObject(event)) return;
      switch (event['type']) {
        case 'response.output_item.done':
          if (isObject(event['item'])) done.push(event['item']);
          break;
        case 'response.completed':
        case 'response.incomplete':
          if (isObject(event['response'])) final = event['response'];
          break;
        case 'response.failed':
        case 'error':
          failed = true;
          break;
      }
    },
    result() {
      if (failed || final === null) return null;
      const output = Array.isArray(final['output']) && final['output'].length > 0 ? final['output'] : done;
      const messages = storedOutputItems(output);
      return messages.length === 0 ? null : { messages, inputTokens: inputTokensOf(final['usage']) };
    },
  };
}
