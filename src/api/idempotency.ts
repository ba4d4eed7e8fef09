import { createHash } from 'node:crypto';

import type { Db, Tx } from '../db/client.js';
import { claimIdempotencyKey, getIdempotencyRecord, storeIdempotentResponse } from '../db/repos/idempotency.js';
import { AppError } from '../lib/errors.js';

export interface HandlerResponse<T> {
  status: number;
  body: T;
  headers?: Record<string, string>;
}

export interface IdempotentOutcome<T> extends HandlerResponse<T> {
  replayed: boolean;
}

/**
 * Runs `handler` in one transaction. With an Idempotency-Key, the first response is stored
 * in that same transaction and replayed to every repeat (same key, same request); the same
 * key with a different request is a 422.
 */
export async function runIdempotent<T>(
  db: Db,
  params: { tenantId: string; key: string | undefined; route: string; request: unknown },
  handler: (tx: Tx) => Promise<HandlerResponse<T>>,
): Promise<IdempotentOutcome<T>> {
  const { key } = params;
  if (key === undefined) {
    const response = await db.transaction(handler);
    return { ...response, replayed: false };
  }
  const requestHash = createHash('sha256')
    .update(params.route)
    .update('\n')
    .update(JSON.stringify(params.request ?? null))
    .digest('hex');
  const claimed = await db.transaction(async (tx) => {
    const isNew = await claimIdempotencyKey(tx, { tenantId: params.tenantId, key, route: params.route, requestHash });
    if (!isNew) return null;
    const response = await handler(tx);
    await storeIdempotentResponse(tx, {
      tenantId: params.tenantId,
      key,
      statusCode: response.status,
      response: response.body,
      headers: response.headers ?? {},
    });
    return response;
  });
  if (claimed) return { ...claimed, replayed: false };

  const record = await getIdempotencyRecord(db, params.tenantId, key);
  if (!record || record.statusCode === null) {
    throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'a request with this Idempotency-Key is still in progress', {
      status: 409,
      field: 'idempotency-key',
    });
  }
  if (record.requestHash !== requestHash || record.route !== params.route) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for a different request', {
      status: 422,
      field: 'idempotency-key',
    });
  }
  return { status: record.statusCode, body: record.response as T, headers: record.headers ?? {}, replayed: true };
}
