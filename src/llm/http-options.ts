/** Options both network adapters share. Network access only through the `fetch` passed in (STYLE §2). */

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Default per-attempt timeout; the SDKs' own default (10 minutes) would pin a worker slot far too long. */
export const DEFAULT_LLM_TIMEOUT_MS = 120_000;

export interface HttpAdapterOptions {
  apiKey: string;
  /** provider endpoint; llm-sim: http://127.0.0.1:PORT (Anthropic) or http://127.0.0.1:PORT/v1 (OpenAI) */
  baseURL?: string | undefined;
  fetch?: FetchLike | undefined;
  /** per-attempt timeout when a call does not give one */
  timeoutMs?: number | undefined;
  defaultHeaders?: Record<string, string> | undefined;
}
