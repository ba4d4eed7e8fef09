import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { withConversationLock } from '../../db/locks.js';
import { getConversation } from '../../db/repos/conversations.js';
import { type PinOutcome, setPinned } from '../../db/repos/pins.js';
import { assertNever } from '../../lib/assert-never.js';
import { AppError, conflict, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { errorResponses, ProblemSchema } from '../schemas/common.js';
import { MessageSeqParamsSchema, StoredMessageSchema } from '../schemas/messages.js';
import { toMessageView } from '../views.js';

/**
 * Pins (SPEC §5.6a): `PUT …/messages/:seq/pin` keeps an active message out of every later
 * compaction, verbatim in the context; `DELETE` releases it. Both are idempotent. They run
 * under the conversation lock finalize commits with, so a compaction in flight either sees
 * the pin (and fails as a stale snapshot) or has already archived the message (409 here).
 */

function messageViewOf(outcome: PinOutcome, conversationId: string, seq: number) {
  switch (outcome.kind) {
    case 'set':
      return toMessageView(outcome.message);
    case 'archived':
      throw conflict(
        'MESSAGE_ARCHIVED',
        `message ${seq} of conversation ${conversationId} is archived; only active messages can be pinned (a revert brings it back)`,
      );
    case 'clip_archive':
      throw conflict(
        'CLIP_ARCHIVE_NOT_PINNABLE',
        `message ${seq} is the clip-archive, which every compaction replaces; pin the messages to keep instead`,
      );
    case 'missing':
      throw new AppError('MESSAGE_NOT_FOUND', `conversation ${conversationId} has no message ${seq}`, { status: 404, field: 'params.seq' });
    default:
      return assertNever(outcome);
  }
}

export function pinRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  async function pin(tenantId: string, id: string, seq: number, pinned: boolean) {
    const conversation = await getConversation(deps.db, tenantId, id);
    if (!conversation) throw notFound('conversation', id);
    const outcome = await deps.db.transaction(async (tx) => {
      await withConversationLock(tx, conversation.id);
      return setPinned(tx, conversation.id, seq, pinned);
    });
    return messageViewOf(outcome, id, seq);
  }

  const schema = (summary: string) => ({
    tags: ['messages'],
    summary,
    params: MessageSeqParamsSchema,
    response: { 200: StoredMessageSchema, 409: ProblemSchema, ...errorResponses },
  });

  return async (app) => {
    app.put(
      '/v1/conversations/:id/messages/:seq/pin',
      { schema: schema('Pin an active message: never archived, kept verbatim in the context') },
      (request) => pin(request.tenantId, request.params.id, request.params.seq, true),
    );
    app.delete(
      '/v1/conversations/:id/messages/:seq/pin',
      { schema: schema('Unpin a message: later compactions may archive it') },
      (request) => pin(request.tenantId, request.params.id, request.params.seq, false),
    );
  };
}
