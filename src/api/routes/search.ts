import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { searchArchive } from '../../db/repos/archive.js';
import { getConversation } from '../../db/repos/conversations.js';
import { notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { SearchQuerySchema, SearchResponseSchema } from '../schemas/batches.js';
import { ConversationParamsSchema, errorResponses } from '../schemas/common.js';

export function searchRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v1/conversations/:id/archive/search',
      {
        schema: {
          tags: ['archive'],
          summary: 'Full-text search over the archived originals, best match first (the recall tool)',
          description:
            'Postgres full-text search (English stemming) over the text, tool calls and tool results of messages as they were ' +
            'appended before compaction summarized, masked or truncated them. A query of stop words only finds nothing.',
          params: ConversationParamsSchema,
          querystring: SearchQuerySchema,
          response: { 200: SearchResponseSchema, ...errorResponses },
        },
      },
      async (request) => {
        const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
        if (!conversation) throw notFound('conversation', request.params.id);
        const hits = await searchArchive(deps.db, conversation.id, { query: request.query.q, limit: request.query.limit });
        return { hits };
      },
    );
  };
}
