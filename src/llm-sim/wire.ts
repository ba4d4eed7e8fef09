import type { SimAnswer, SimRequest } from './types.js';

/** The errors llm-sim can answer with, rendered by each API in its own shape. */
export type WireErrorKind =
  'rate_limit' | 'overloaded' | 'server_error' | 'auth' | 'invalid_request' | 'context_length_exceeded' | 'not_found';

export interface WireError {
  status: number;
  body: unknown;
}

/** One provider's wire format: request parsing, JSON answers, SSE frames, error bodies. */
export interface WireFormat {
  /** `headers`: the request's, names in lower case (betas, API key) */
  parse(body: unknown, headers?: Record<string, string>): SimRequest;
  response(answer: SimAnswer, request: SimRequest): unknown;
  /** frames sent when the first token is ready (message_start… / the role chunk) */
  streamStart(answer: SimAnswer, request: SimRequest): string[];
  streamDelta(answer: SimAnswer, text: string): string;
  streamEnd(answer: SimAnswer, request: SimRequest): string[];
  /** `param` names the offending field, `code` the error's code, where the API's error shape has room for them (OpenAI). */
  error(kind: WireErrorKind, message: string, param?: string | null, code?: string | null): WireError;
}

/** One SSE frame; `event:` only for APIs that name their events (Anthropic). */
export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${payload}\n\n`;
}
