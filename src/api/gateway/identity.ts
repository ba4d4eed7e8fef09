import { createHash } from 'node:crypto';

import { AppError } from '../../lib/errors.js';
import { inputItemsOf } from './responses-items.js';
import type { GatewayWire } from './wire.js';

export type GatewayProvider = 'anthropic' | 'openai';

export const CONVERSATION_HEADER = 'x-compactd-conversation';

/** Where a gateway request's conversation id came from (README "Use compactd without changing your agent"). */
export type IdentitySource = 'header' | 'metadata.user_id' | 'user' | 'session-header' | 'codex-session' | 'first-turn-hash';

export interface ConversationIdentity {
  id: string;
  source: IdentitySource;
  /**
   * a sub-agent of the client (Claude Code's `x-claude-code-agent-id`): `id` is its own
   * conversation, `parentId` the conversation of the agent that started it
   */
  parentId?: string;
  /**
   * a one-shot side request of Claude Code (`sideRequestOf`): it never takes an id whose
   * conversation has no history yet (thread.ts), so the main loop it races keeps the id
   */
  sideRequest?: true;
}

/** Claude Code names its session and, since 2.1.139, the sub-agent a request comes from and that agent's parent. */
export const SESSION_HEADER = 'x-claude-code-session-id';
export const AGENT_HEADER = 'x-claude-code-agent-id';
export const PARENT_AGENT_HEADER = 'x-claude-code-parent-agent-id';
/** The Codex CLI names its session (a thread, kept by `codex exec resume`) in every Responses request. */
export const CODEX_SESSION_HEADER = 'session-id';

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * The conversation of a gateway request, first match wins:
 * 1. the `x-compactd-conversation` header (must be a valid conversation id: 400 otherwise);
 * 2. the provider's own end-user field: Anthropic `metadata.user_id`, OpenAI `user` — used
 *    as is when it is a valid id, else as `user-<sha256 prefix>` (Claude Code sends a JSON
 *    object naming its session there, so each session is a conversation of its own);
 * 3. Claude Code's session header: `cc-<session id>`; on the Responses route, Codex's
 *    `session-id` header: `codex-<session id>`;
 * 4. `h-<sha256 prefix>` of the system prompt and the first user message: two runs of the same
 *    agent on the same task share it (docs/gateway.md: collisions).
 * A request from a sub-agent (`x-claude-code-agent-id`) is the sub-agent's own conversation,
 * `<id>.a-<agent id>`, linked to its parent's. Within one id, a history that does not start
 * with the stored one's first message is a thread of its own (`threadId`).
 */
export function identifyConversation(
  provider: GatewayWire,
  headers: Record<string, unknown>,
  body: Record<string, unknown>,
): ConversationIdentity {
  const base = { ...baseIdentity(provider, headers, body), ...(sideRequestOf(headers, body) ? { sideRequest: true as const } : {}) };
  const agent = headerValue(headers, AGENT_HEADER);
  if (agent === undefined || agent === '') return base;
  const parent = headerValue(headers, PARENT_AGENT_HEADER);
  const agentId = (name: string) => childId(base.id, 'a', name);
  return { ...base, id: agentId(agent), parentId: parent === undefined || parent === '' ? base.id : agentId(parent) };
}

/**
 * Claude Code run interactively asks for the session's title beside each turn, in a request of
 * its own with the main loop's session and user ids: one user message and an empty tool list
 * (the main loop always declares its tools). On the first turn the two race for the id, and the title request
 * often arrives first (the real CLI, 2.1.328): were it to take the id, the main loop's session
 * would be a thread of its title.
 */
function sideRequestOf(headers: Record<string, unknown>, body: Record<string, unknown>): boolean {
  const session = headerValue(headers, SESSION_HEADER);
  if (session === undefined || session === '') return false;
  const tools = body['tools'];
  const messages = body['messages'];
  return Array.isArray(tools) && tools.length === 0 && Array.isArray(messages) && messages.length === 1;
}

/**
 * The conversation of a request whose history shares not even its first message with the one
 * stored under its id (a side request such as a title, an edited first turn, another agent):
 * a thread of its own, named after that first message, so every later request of the same
 * thread finds it again.
 */
export function threadId(baseId: string, firstKey: string): string {
  return childId(baseId, 't', sha(firstKey).slice(0, 16));
}

/** `<base>.<kind>-<part>`, or a hash of both when that is not a valid id (too long, other characters). */
function childId(baseId: string, kind: 'a' | 't', part: string): string {
  const plain = `${baseId}.${kind}-${part}`;
  return ID_PATTERN.test(plain) ? plain : `${kind}-${sha(`${baseId}\n${part}`)}`;
}

function headerValue(headers: Record<string, unknown>, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value.trim() : Array.isArray(value) && typeof value[0] === 'string' ? value[0].trim() : undefined;
}

function baseIdentity(provider: GatewayWire, headers: Record<string, unknown>, body: Record<string, unknown>): ConversationIdentity {
  const header = headers[CONVERSATION_HEADER];
  if (header !== undefined) {
    const value = Array.isArray(header) ? header[0] : header;
    if (typeof value !== 'string' || !ID_PATTERN.test(value) || value === '.' || value === '..') {
      throw new AppError('INVALID_CONVERSATION_HEADER', `${CONVERSATION_HEADER} must be 1-128 characters of A-Z a-z 0-9 . _ -`, {
        status: 400,
        field: `headers.${CONVERSATION_HEADER}`,
      });
    }
    return { id: value, source: 'header' };
  }
  const endUser = provider === 'anthropic' ? endUserOfAnthropic(body) : body['user'];
  if (typeof endUser === 'string' && endUser.trim() !== '') {
    const source = provider === 'anthropic' ? 'metadata.user_id' : 'user';
    return { id: ID_PATTERN.test(endUser) && endUser !== '.' && endUser !== '..' ? endUser : `user-${sha(endUser)}`, source };
  }
  const session = headerValue(headers, SESSION_HEADER);
  if (session !== undefined && session !== '')
    return { id: ID_PATTERN.test(`cc-${session}`) ? `cc-${session}` : `cc-${sha(session)}`, source: 'session-header' };
  // Codex's developer messages and first user message (its environment) are the same for every session in a directory
  const codex = provider === 'responses' ? headerValue(headers, CODEX_SESSION_HEADER) : undefined;
  if (codex !== undefined && codex !== '')
    return { id: ID_PATTERN.test(`codex-${codex}`) ? `codex-${codex}` : `codex-${sha(codex)}`, source: 'codex-session' };
  return { id: `h-${sha(JSON.stringify([instructionsOf(provider, body), firstUserMessage(body)]))}`, source: 'first-turn-hash' };
}

function endUserOfAnthropic(body: Record<string, unknown>): unknown {
  const metadata = body['metadata'];
  return typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>)['user_id'] : undefined;
}

function instructionsOf(provider: GatewayWire, body: Record<string, unknown>): unknown {
  if (provider === 'anthropic') return body['system'] ?? null;
  const messages = historyOf(body);
  if (provider === 'responses')
    return [
      body['instructions'] ?? null,
      ...messages.filter((m) => isRole(m, 'system') || isRole(m, 'developer')).map((m) => (m as Record<string, unknown>)['content']),
    ];
  return messages.filter((m) => isRole(m, 'system') || isRole(m, 'developer')).map((m) => (m as Record<string, unknown>)['content']);
}

/** `messages`, or a Responses request's `input` items. */
const historyOf = (body: Record<string, unknown>): unknown[] =>
  Array.isArray(body['messages']) ? body['messages'] : body['input'] !== undefined ? inputItemsOf(body) : [];

function firstUserMessage(body: Record<string, unknown>): unknown {
  const messages = historyOf(body);
  const first = messages.find((m) => isRole(m, 'user'));
  return first === undefined ? null : (first as Record<string, unknown>)['content'];
}

const isRole = (message: unknown, role: string) =>
  typeof message === 'object' && message !== null && (message as Record<string, unknown>)['role'] === role;
