import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { searchArchive } from '../../db/repos/archive.js';
import { getConversation } from '../../db/repos/conversations.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { createTenantSlots } from '../tenant-slots.js';
import { SearchQuerySchema, SearchResponseSchema } from '../schemas/batches.js';
import { ConversationParamsSchema, errorResponses, ProblemSchema } from '../schemas/common.js';

/** Default of COMPACTD_TENANT_MAX_SEARCHES, for a config that does not set it. */
const DEFAULT_MAX_SEARCHES = 8;
/** A refused search is worth retrying about when a running one ends (well under a second, or its statement timeout). */
const RETRY_AFTER_MS = 1000;

export function searchRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  // per API process: each process counts its own searches
  const slots = createTenantSlots(deps.config.apiLimits?.maxSearchesPerTenant ?? DEFAULT_MAX_SEARCHES);
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
            'COMPACTD_TENANT_MAX_SEARCHES searches at once per API process (429 with `retry-after` past it); a search slower ' +
            'than the statement timeout is a 503 QUERY_TIMEOUT.',
          params: ConversationParamsSchema,
          querystring: SearchQuerySchema,
          response: { 200: SearchResponseSchema, 429: ProblemSchema, 503: ProblemSchema, ...errorResponses },
        },
      },
      async (request) => {
        const release = slots.tryAcquire(request.tenantId);
        if (!release) {
          throw new AppError('TOO_MANY_SEARCHES', 'This tenant has too many archive searches running at once; retry shortly.', {
            status: 429,
            retryable: true,
            retryAfterMs: RETRY_AFTER_MS,
          });
        }
        // released on every path: answer, error, and a client gone mid-search (the query still ends: statement timeout)
        try {
          const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
          if (!conversation) throw notFound('conversation', request.params.id);
          const hits = await searchArchive(deps.db, conversation.id, { query: request.query.q, limit: request.query.limit });
          return { hits };
        } finally {
          release();
        }
      },
    );
  };
}
