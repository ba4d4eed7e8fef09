import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { formatSeqRanges } from '../../compaction/context/index.js';
import { listOriginals, type OriginalRow } from '../../db/repos/archive.js';
import { batchBelongsTo, type BatchRow, getBatchForTenant, listBatches } from '../../db/repos/batches.js';
import { getConversation } from '../../db/repos/conversations.js';
import { badRequest, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import {
  BatchMessagesQuerySchema,
  BatchMessagesResponseSchema,
  BatchSchema,
  type BatchView,
  ListBatchesQuerySchema,
  ListBatchesResponseSchema,
} from '../schemas/batches.js';
import { ConversationParamsSchema, errorResponses, UuidParamsSchema } from '../schemas/common.js';
import { originalFields } from './original-fields.js';

function toBatchView(row: BatchRow, conversationExternalId: string): BatchView {
  return {
    id: row.id,
    conversationId: conversationExternalId,
    jobId: row.jobId,
    level: row.level,
    summary: row.summary,
    seqs: row.seqs,
    seqRanges: formatSeqRanges(row.seqs),
    sourceMessages: row.sourceMessages,
    sourceTokens: row.sourceTokens,
    summaryTokens: row.summaryTokens,
    model: row.model,
    supersededBy: row.supersededBy,
    createdAt: row.createdAt.toISOString(),
  };
}

function toOriginalView(row: OriginalRow) {
  return {
    id: row.id,
    seq: row.seq,
    role: row.role,
    kind: 'message' as const,
    content: row.content as unknown as Array<Record<string, unknown>>,
    ...(row.name ? { name: row.name } : {}),
    ...originalFields(row),
    tokens: row.tokens,
    createdAt: row.createdAt,
    archived: row.archived,
    reason: row.reason,
    batchId: row.batchId,
  };
}

export function batchRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v1/conversations/:id/batches',
      {
        schema: {
          tags: ['archive'],
          summary: 'Archived batch summaries, oldest first (by creation, then first seq), keyset-paginated',
          params: ConversationParamsSchema,
          querystring: ListBatchesQuerySchema,
          response: { 200: ListBatchesResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
        if (!conversation) throw notFound('conversation', request.params.id);
        const { level, live, after, limit } = request.query;
        if (after !== undefined && !(await batchBelongsTo(deps.db, conversation.id, after))) {
          throw badRequest(
            'INVALID_CURSOR',
            `batch ${after} is not a batch of conversation ${conversation.externalId}`,
            'querystring.after',
          );
        }
        const rows = await listBatches(deps.db, conversation.id, {
          limit,
          ...(level === undefined ? {} : { level }),
          ...(live === undefined ? {} : { live }),
          ...(after === undefined ? {} : { after }),
        });
        const last = rows.at(-1);
        return {
          batches: rows.map((row) => toBatchView(row, conversation.externalId)),
          nextAfter: rows.length === limit && last ? last.id : null,
        };
      },
    );

    app.get(
      '/v1/batches/:id',
      {
        schema: {
          tags: ['archive'],
          summary: 'One batch: level, summary, coverage, tokens, the batch that absorbed it',
          params: UuidParamsSchema,
          response: { 200: BatchSchema, ...errorResponses },
        },
      },
      async (request) => {
        const batch = await getBatchForTenant(deps.db, request.tenantId, request.params.id);
        if (!batch) throw notFound('batch', request.params.id);
        return toBatchView(batch, batch.conversationExternalId);
      },
    );

    app.get(
      '/v1/batches/:id/messages',
      {
        schema: {
          tags: ['archive'],
          summary: 'The original messages a batch covers (for level ≥ 1, through the batches it absorbed), in seq order',
          params: UuidParamsSchema,
          querystring: BatchMessagesQuerySchema,
          response: { 200: BatchMessagesResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const batch = await getBatchForTenant(deps.db, request.tenantId, request.params.id);
        if (!batch) throw notFound('batch', request.params.id);
        const { after, limit } = request.query;
        const rows = await listOriginals(deps.db, batch.conversationId, { seqs: batch.seqs, after, limit });
        // The page boundary comes from the batch's coverage, not from the rows found for it.
        const remaining = [...new Set(batch.seqs)].filter((seq) => seq > after).sort((a, b) => a - b);
        return {
          messages: rows.map(toOriginalView),
          nextAfter: remaining.length > limit ? (remaining[limit - 1] as number) : null,
        };
      },
    );
  };
}
