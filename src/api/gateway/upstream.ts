import type { GatewayProvider } from './identity.js';

/** The header a client may use to send its own provider key (passed through, never stored nor logged). */
export const UPSTREAM_KEY_HEADER = 'x-compactd-upstream-key';

export interface UpstreamConfig {
  anthropic: { apiKey: string | undefined; baseUrl: string | undefined };
  openai: { apiKey: string | undefined; baseUrl: string | undefined };
}

const DEFAULT_BASE: Record<GatewayProvider, string> = { anthropic: 'https://api.anthropic.com', openai: 'https://api.openai.com/v1' };

/**
 * The provider URL for a gateway path: Anthropic's base URL has no `/v1` (ANTHROPIC_BASE_URL
 * convention), OpenAI's ends with it (OPENAI_BASE_URL convention). `path` is what follows
 * `/gateway/<provider>`, query string included (Claude Code sends `?beta=true`).
 */
export function upstreamUrl(provider: GatewayProvider, config: UpstreamConfig, path: string): string {
  const base = (config[provider].baseUrl ?? DEFAULT_BASE[provider]).replace(/\/+$/, '');
  return provider === 'anthropic' ? `${base}${path}` : `${base}${path.replace(/^\/v1(?=\/|$)/, '')}`;
}

/** Request headers not forwarded: hop-by-hop, framing, compactd's own, and the client's compactd key. */
const DROPPED = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'accept-encoding',
  'authorization',
  'x-api-key',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
  'expect',
]);

/**
 * The headers of the upstream request: the client's own (its `anthropic-beta`,
 * `anthropic-version`, `x-stainless-*`, …), with the provider credentials in place of the
 * compactd key: the client's `x-compactd-upstream-key` when it sends one, else compactd's
 * configured key. Null when there is no key to send.
 */
export function upstreamHeaders(provider: GatewayProvider, config: UpstreamConfig, incoming: Record<string, string | string[] | undefined>): Record<string, string> | null {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || DROPPED.has(lower) || lower.startsWith('x-compactd-')) continue;
    headers[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  const passed = incoming[UPSTREAM_KEY_HEADER];
  const key = (Array.isArray(passed) ? passed[0] : passed) ?? config[provider].apiKey;
  if (key === undefined || key === '') return null;
  if (provider === 'anthropic') headers['x-api-key'] = key;
  else headers['authorization'] = `Bearer ${key}`;
  headers['content-type'] = 'application/json';
  // the answer is relayed as received and read on the way: no compressed encodings
  headers['accept-encoding'] = 'identity';
  return headers;
}

/** Response headers not relayed (the gateway re-frames the body). */
const NOT_RELAYED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

export function relayedHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!NOT_RELAYED.has(name.toLowerCase())) out[name] = value;
  });
  return out;
}

/**
 * A provider's "the prompt does not fit the window" answer: Anthropic 400 `prompt is too
 * long`, OpenAI `context_length_exceeded`. The gateway compacts and retries those once.
 */
export function isContextOverflow(provider: GatewayProvider, status: number, body: string): boolean {
  if (status !== 400 && status !== 413) return false;
  return provider === 'anthropic' ? /prompt is too long/i.test(body) : /context_length_exceeded/.test(body);
}

/**
 * The window and the prompt size a provider's overflow error names, when it does: Anthropic
 * "prompt is too long: 208310 tokens > 200000 maximum", OpenAI "maximum context length is
 * 128000 tokens. However, your messages resulted in 130512 tokens".
 */
export function overflowSizes(body: string): { prompt: number; window: number } | null {
  const anthropic = /prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)/i.exec(body);
  if (anthropic) return { prompt: Number(anthropic[1]), window: Number(anthropic[2]) };
  const window = /maximum context length is (\d+)/i.exec(body);
  const prompt = /resulted in (\d+) tokens/i.exec(body);
  return window && prompt ? { prompt: Number(prompt[1]), window: Number(window[1]) } : null;
}

/**
 * What the compaction answering an overflow must bring compactd's active history down to:
 * the history shrunk by the provider's overshoot (its count includes system prompt and tools,
 * compactd's does not), with a fifth of the window to spare for the answer and count drift.
 */
export function overflowTarget(activeTokens: number, sizes: { prompt: number; window: number }): number {
  const overshoot = sizes.prompt - sizes.window;
  return Math.max(1, Math.floor(activeTokens - overshoot - 0.2 * sizes.window));
}

export interface ProviderErrorBody {
  status: number;
  body: Record<string, unknown>;
}

/** An error the gateway itself answers, in the provider's own shape so the client's SDK reads it. */
export function providerError(provider: GatewayProvider, status: number, message: string, field?: string): ProviderErrorBody {
  if (provider === 'anthropic') {
    const type = status === 401 ? 'authentication_error' : status === 404 ? 'not_found_error' : status === 413 ? 'request_too_large' : status >= 500 ? 'api_error' : 'invalid_request_error';
    return { status, body: { type: 'error', error: { type, message, ...(field ? { field } : {}) } } };
  }
  const type = status === 401 ? 'invalid_api_key' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { status, body: { error: { message, type, param: field ?? null, code: status === 401 ? 'invalid_api_key' : null } } };
}
