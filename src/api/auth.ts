import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Db } from '../db/client.js';
import { findTenantByApiKey } from '../db/repos/api-keys.js';
import { AppError } from '../lib/errors.js';
import { createKeyCache, type KeyCache } from './key-cache.js';

declare module 'fastify' {
  interface FastifyRequest {
    tenantId: string;
  }
}

const unauthorized = (message: string) => new AppError('UNAUTHORIZED', message, { status: 401, field: 'authorization' });

/** Bearer API keys: only a hash is stored, so a key is looked up by its hash. */
export function createAuthHook(db: Db) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (!header) {
      void reply.header('www-authenticate', 'Bearer');
      throw unauthorized('missing Authorization: Bearer <api key>');
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw unauthorized('Authorization must be "Bearer <api key>"');
    request.tenantId = await tenantOfKey(db, match[1]);
  };
}

/** One key cache per database (a process may serve several in tests). */
const caches = new WeakMap<Db, KeyCache>();

/**
 * The tenant of an API key (only its hash is stored); 401 when unknown or revoked. Looked up
 * at most once per key every 5 s (key-cache.ts): a revoked key stops working within 5 s.
 */
export async function tenantOfKey(db: Db, key: string): Promise<string> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = createKeyCache()));
  const tenantId = await cache.tenantOf(key, async (k) => (await findTenantByApiKey(db, k))?.tenantId ?? null);
  if (tenantId === null) throw unauthorized('unknown or revoked API key');
  return tenantId;
}

/**
 * The gateway's clients are the providers' SDKs, which send the key where their provider
 * wants it: `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI, and Anthropic with an
 * auth token). The same key, the same lookup.
 */
export function createGatewayAuthHook(db: Db) {
  return async function authenticateGateway(request: FastifyRequest): Promise<void> {
    const apiKey = request.headers['x-api-key'];
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
    const key = (Array.isArray(apiKey) ? apiKey[0] : apiKey) ?? bearer;
    if (!key)
      throw new AppError('UNAUTHORIZED', 'missing compactd API key (x-api-key or Authorization: Bearer)', {
        status: 401,
        field: 'x-api-key',
      });
    request.tenantId = await tenantOfKey(db, key);
  };
}
