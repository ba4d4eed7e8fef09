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

type IncomingHeaders = Record<string, string | string[] | undefined>;

const firstValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * Whether the request is sent with compactd's configured provider key: it has no
 * `x-compactd-upstream-key` of its own. The operator pays for those requests, so their
 * models are checked (model-access.ts) and the operator's account details (organization,
 * rate limits) are not relayed back.
 */
export function usesOperatorKey(incoming: IncomingHeaders): boolean {
  return firstValue(incoming[UPSTREAM_KEY_HEADER]) === undefined;
}

/**
 * Request headers forwarded by name. Everything else a client sends stays here: what it says
 * about the network between client and compactd (cookies, `forwarded`, `x-forwarded-*`,
 * `x-real-ip`, `cf-*`, an access proxy's tokens), hop-by-hop headers, compactd's own
 * `x-compactd-*`, the client's credentials (replaced by the provider key) and any header this
 * list does not name. Content headers are compactd's: it sends its own body (`content-type`
 * set below, `content-length` by fetch), never the client's encoding of it.
 */
const FORWARDED_NAMES = new Set([
  'accept',
  'user-agent',
  // Claude Code's own request metadata (`x-app: cli`, its session id), which it sends the
  // provider when it talks to it directly: names the client program and its session, carries
  // no credentials and nothing about the network in between.
  'x-app',
  // the Codex CLI's client name (`codex_exec`, `codex_cli_rs`), sent to the provider beside its `x-codex-*` headers
  'originator',
]);

/**
 * Header families of the providers' own APIs and SDKs (`anthropic-version`, `anthropic-beta`,
 * `openai-beta`, `x-stainless-retry-count`, …), Claude Code's `x-claude-code-*` (see `x-app`) and
 * the Codex CLI's `x-codex-*` (its turn metadata and `x-codex-beta-features`, the betas it asks
 * for, provider compaction among them).
 */
const FORWARDED_PREFIXES = ['anthropic-', 'openai-', 'x-stainless-', 'x-claude-code-', 'x-codex-'];

/**
 * OpenAI's account selectors: with the client's own key they pick among its organizations and
 * projects; with compactd's key they would pick among the operator's, so they are not sent.
 */
const OPERATOR_ACCOUNT_REQUEST = new Set(['openai-organization', 'openai-project']);

/** Headers the client marked hop-by-hop by naming them in `Connection` (RFC 9110 §7.6.1). */
function connectionNamed(incoming: IncomingHeaders): Set<string> {
  const value = incoming['connection'];
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    joined
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token !== ''),
  );
}

function isForwarded(name: string, operatorKey: boolean): boolean {
  if (operatorKey && OPERATOR_ACCOUNT_REQUEST.has(name)) return false;
  return FORWARDED_NAMES.has(name) || FORWARDED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/**
 * The headers of the upstream request: those of the client's that the provider reads (see
 * FORWARDED_NAMES), with the provider credentials in place of the compactd key: the client's
 * `x-compactd-upstream-key` when it sends one, else compactd's configured key. Null when
 * there is no key to send.
 */
export function upstreamHeaders(
  provider: GatewayProvider,
  config: UpstreamConfig,
  incoming: IncomingHeaders,
): Record<string, string> | null {
  const operatorKey = usesOperatorKey(incoming);
  const hopByHop = connectionNamed(incoming);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || hopByHop.has(lower) || !isForwarded(lower, operatorKey)) continue;
    headers[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  const key = firstValue(incoming[UPSTREAM_KEY_HEADER]) ?? config[provider].apiKey;
  if (key === undefined || key === '') return null;
  if (provider === 'anthropic') headers['x-api-key'] = key;
  else headers['authorization'] = `Bearer ${key}`;
  headers['content-type'] = 'application/json';
  // the answer is relayed as received and read on the way: no compressed encodings
  headers['accept-encoding'] = 'identity';
  return headers;
}

/**
 * Response headers relayed by name: what the providers' SDKs read (request ids, retry advice,
 * the stream's content type) and the providers' own `anthropic-*` / `openai-*` families. Not
 * `set-cookie` (a provider's cookie is for compactd's connection, not the tenant's), nor
 * framing (the gateway re-frames the body), nor anything else a provider or a proxy in front
 * of it adds.
 */
const RELAYED_NAMES = new Set([
  'content-type',
  // `no-cache` on a stream keeps proxies between the client and compactd from buffering it
  'cache-control',
  'request-id',
  'x-request-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
]);

const RELAYED_PREFIXES = ['anthropic-', 'openai-'];

/**
 * Which organization and project answered: the operator's when compactd's key was used, which
 * is no tenant's business; with the tenant's own key, something the tenant knows already.
 */
const ACCOUNT_RESPONSE = new Set(['anthropic-organization-id', 'openai-organization', 'openai-project']);

/**
 * Rate-limit state of the key that was used (Anthropic's priority-tier capacity is one too):
 * the tenant's own when it sent its key, else the operator's, which says how much the
 * operator's account buys and how much the other tenants are using.
 */
const RATE_LIMIT_PREFIXES = ['anthropic-ratelimit-', 'anthropic-priority-', 'x-ratelimit-'];

function isRelayed(name: string, operatorKey: boolean): boolean {
  if (ACCOUNT_RESPONSE.has(name)) return false;
  if (RATE_LIMIT_PREFIXES.some((prefix) => name.startsWith(prefix))) return !operatorKey;
  return RELAYED_NAMES.has(name) || RELAYED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The provider's response headers the tenant gets; `operatorKey`: the request went out with compactd's key (usesOperatorKey). */
export function relayedHeaders(headers: Headers, operatorKey: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (isRelayed(lower, operatorKey)) out[lower] = value;
  });
  return out;
}

/**
 * The gateway's answer to a provider that redirected (3xx): 502 in the provider's shape. The
 * upstream call does not follow redirects, since following one would carry the provider key
 * to whatever origin the `Location` names; relaying it would send the client's SDK there
 * itself, past compactd. Null for any other status.
 */
export function redirectedUpstream(provider: GatewayProvider, status: number): ProviderErrorBody | null {
  if (status < 300 || status >= 400) return null;
  return providerError(provider, 502, `the provider answered with a redirect (HTTP ${status}), which the gateway does not follow`);
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
    const type =
      status === 401
        ? 'authentication_error'
        : status === 403
          ? 'permission_error'
          : status === 404
            ? 'not_found_error'
            : status === 413
              ? 'request_too_large'
              : status >= 500
                ? 'api_error'
                : 'invalid_request_error';
    return { status, body: { type: 'error', error: { type, message, ...(field ? { field } : {}) } } };
  }
  const type = status === 401 ? 'invalid_api_key' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { status, body: { error: { message, type, param: field ?? null, code: status === 401 ? 'invalid_api_key' : null } } };
}
