import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { searchArchive } from '../../db/repos/archive.js';
import { getConversation } from '../../db/repos/conversations.js';
import { notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { SearchQuerySchema, SearchResponseSchema } from '../schemas/batches.js';
import { ConversationParamsSchema, errorResponses, ProblemSchema } from '../schemas/common.js';
import type { SearchSlots } from '../search-slots.js';

/** `slots`: the tenant's searches at once in this process, shared with the inspector's (search-slots.ts). */
export function searchRoutes(deps: ApiDeps, slots: SearchSlots): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v1/conversations/:id/archive/search',
      {
        schema: {
          tags: ['archive'],
          summary: 'Recall: find archived originals by any fragment or by words, best match first (the recall tool)',
          description:
            'Searches the text, tool calls and tool results of messages as they were appended before compaction summarized, ' +
            'masked or truncated them. The query (or the inside of one quoted string), when 3 characters or longer, is matched ' +
            'as a literal, case-insensitive substring of their lines (`%` and `_` are literal): a relative or whole path, a file ' +
            'name, a command, a piece of an error line, an id. These hits come first (`match: "fragment"`, rank 1 + full-text ' +
            'rank), then Postgres full-text hits (English stemming, web-search syntax) that hold no such substring ' +
            '(`match: "words"`). Each hit names its tool and carries its first matching lines with a line of context either side. ' +
            'A message archived moments ago is matched from its content until its lines are indexed. A tenant runs at most ' +
            'COMPACTD_TENANT_MAX_SEARCHES searches at once per API process, the inspector’s included (429 with `retry-after` ' +
            'past it); a search slower than the statement timeout is a 503 QUERY_TIMEOUT.',
          params: ConversationParamsSchema,
          querystring: SearchQuerySchema,
          response: { 200: SearchResponseSchema, 429: ProblemSchema, 503: ProblemSchema, ...errorResponses },
        },
      },
      async (request) =>
        slots.run(request.tenantId, async () => {
          const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
          if (!conversation) throw notFound('conversation', request.params.id);
          return { hits: await searchArchive(deps.db, conversation.id, { query: request.query.q, limit: request.query.limit }) };
        }),
    );
  };
}
