/** Provider-neutral view of a completion call inside llm-sim. */

export type SimApi = 'anthropic' | 'openai';

export interface SimMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
}

export interface SimRequest {
  api: SimApi;
  model: string;
  /** the system prompt (Anthropic `system`) first, then the messages in order */
  messages: SimMessage[];
  maxTokens: number;
  stream: boolean;
  /** OpenAI `stream_options.include_usage` */
  includeUsage: boolean;
}

/** What the simulated model answers, before it is rendered in a wire format. */
export interface SimAnswer {
  id: string;
  model: string;
  text: string;
  stop: 'end' | 'length';
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
}

/** A request the sim refuses, rendered by each API in its own error shape. */
export class SimRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: 'invalid_request' | 'context_length_exceeded' = 'invalid_request',
    /** the offending field, for APIs that name it (OpenAI `param`) */
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** Renders the text of Anthropic/OpenAI content: a string, or an array of blocks/parts. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      if (typeof block !== 'object' || block === null) return '';
      const b = block as Record<string, unknown>;
      if (typeof b['text'] === 'string') return b['text'];
      if (b['type'] === 'tool_use') return `${String(b['name'])} ${JSON.stringify(b['input'] ?? {})}`;
      if (b['type'] === 'tool_result') return contentText(b['content']);
      return '';
    })
    .join('\n');
}
