/**
 * The request shapes the gateway speaks: Anthropic Messages, OpenAI Chat Completions and the
 * OpenAI Responses API (`POST /v1/responses`, what Codex and the OpenAI Agents SDK use). The
 * provider (identity.ts `GatewayProvider`) decides keys, headers, URLs and error shapes; the
 * wire decides how a history is read, stored and rebuilt.
 */
export type GatewayWire = 'anthropic' | 'openai' | 'responses';

/** The provider a wire belongs to (identity.ts `GatewayProvider`; not imported, identity.ts reads wires too). */
export const providerOfWire = (wire: GatewayWire): 'anthropic' | 'openai' => (wire === 'anthropic' ? 'anthropic' : 'openai');

/** The body field holding the history: `messages`, or the Responses API's `input`. */
export const historyField = (wire: GatewayWire): 'messages' | 'input' => (wire === 'responses' ? 'input' : 'messages');
