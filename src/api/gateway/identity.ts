import { createHash } from 'node:crypto';
import { AppError } from '../../lib/errors.js';

export type GatewayProvider = 'anthropic' | 'openai';

export const CONVERSATION_HEADER = 'x-compactd-conversation';

/** Where a gateway request's conversation id came from (README "Use compactd without changing your agent"). */
export type IdentitySource = 'header' | 'metadata.user_id' | 'user' | 'first-turn-hash';

export interface ConversationIdentity {
  id: string;
  source: IdentitySource;
}

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * The conversation of a gateway request, first match wins:
 * 1. the `x-compactd-conversation` header (must be a valid conversation id: 400 otherwise);
 * 2. the provider's own end-user field: Anthropic `metadata.user_id`, OpenAI `user` — used
 *    as is when it is a valid id, else as `user-<sha256 prefix>` (Claude Code sends a JSON
 *    object naming its session there, so each session is a conversation of its own);
 * 3. `h-<sha256 prefix>` of the system prompt and the first user message: two runs of the same
 *    agent on the same task share it (see README: collisions).
 */
export function identifyConversation(provider: GatewayProvider, headers: Record<string, unknown>, body: Record<string, unknown>): ConversationIdentity {
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
  return { id: `h-${sha(JSON.stringify([instructionsOf(provider, body), firstUserMessage(body)]))}`, source: 'first-turn-hash' };
}

function endUserOfAnthropic(body: Record<string, unknown>): unknown {
  const metadata = body['metadata'];
  return typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>)['user_id'] : undefined;
}

function instructionsOf(provider: GatewayProvider, body: Record<string, unknown>): unknown {
  if (provider === 'anthropic') return body['system'] ?? null;
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  return messages.filter((m) => isRole(m, 'system') || isRole(m, 'developer')).map((m) => (m as Record<string, unknown>)['content']);
}

function firstUserMessage(body: Record<string, unknown>): unknown {
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  const first = messages.find((m) => isRole(m, 'user'));
  return first === undefined ? null : (first as Record<string, unknown>)['content'];
}

const isRole = (message: unknown, role: string) => typeof message === 'object' && message !== null && (message as Record<string, unknown>)['role'] === role;
