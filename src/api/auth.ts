import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { findTenantByApiKey } from '../db/repos/api-keys.js';
import { AppError } from '../lib/errors.js';

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
    const found = await findTenantByApiKey(db, match[1]);
    if (!found) throw unauthorized('unknown or revoked API key');
    request.tenantId = found.tenantId;
  };
}
