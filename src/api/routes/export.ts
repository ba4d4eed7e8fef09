import { Readable } from 'node:stream';

import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { type OriginalRow, streamHistory } from '../../db/repos/archive.js';
import { getConversation } from '../../db/repos/conversations.js';
import { notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { type ExportLine, ExportLineSchema, ExportQuerySchema } from '../schemas/batches.js';
import { ConversationParamsSchema, errorResponses } from '../schemas/common.js';
import { originalFields } from './original-fields.js';

/** Originals per page of the export's plan, and the content bytes read per round trip (a row more when it alone is bigger). */
export const EXPORT_PAGE_SIZE = 500;
export const EXPORT_PAGE_BYTES = 4 * 1024 * 1024;

function toExportLine(row: OriginalRow): string {
  return JSON.stringify({
    seq: row.seq,
    role: row.role,
    kind: row.kind,
    content: row.content,
    ...(row.name ? { name: row.name } : {}),
    ...originalFields(row),
    archived: row.archived,
    reason: row.reason,
    batchId: row.batchId,
  });
}

/** Small lines are written together up to this size; a bigger line goes alone. */
const CHUNK_CHARS = 64 * 1024;

/**
 * Lines grouped into chunks of about `CHUNK_CHARS`, never a page joined into one string (a
 * page of big messages would pass V8's string limit). `Readable.from` pulls the next chunk
 * only when the client has taken the last, and the next page only after this one's last line.
 */
export async function* exportChunks(pages: AsyncIterable<OriginalRow[]>): AsyncGenerator<string> {
  let pending: string[] = [];
  let chars = 0;
  for await (const page of pages) {
    for (const row of page) {
      const line = `${toExportLine(row)}\n`;
      if (chars + line.length > CHUNK_CHARS && pending.length > 0) {
        yield pending.join('');
        pending = [];
        chars = 0;
      }
      pending.push(line);
      chars += line.length;
    }
  }
  if (pending.length > 0) yield pending.join('');
}

export function exportRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v1/conversations/:id/export',
      {
        schema: {
          tags: ['archive'],
          summary: 'The full history as JSONL, streamed: every appended message once, as appended, in seq order',
          description:
            'Active and archived originals merged by seq. With `clipArchive=true` (the default) the active clip-archive ' +
            'message follows the original that shares its seq, with `kind: "clip_archive"`; superseded clip-archives are never exported.',
          params: ConversationParamsSchema,
          querystring: ExportQuerySchema,
          response: {
            200: { description: 'one JSON object per line', content: { 'application/x-ndjson': { schema: ExportLineSchema } } },
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const conversation = await getConversation(deps.db, request.tenantId, request.params.id);
        if (!conversation) throw notFound('conversation', request.params.id);
        const pages = streamHistory(deps.db, conversation.id, {
          pageSize: EXPORT_PAGE_SIZE,
          maxPageBytes: EXPORT_PAGE_BYTES,
          includeClipArchive: request.query.clipArchive,
        });
        const body = Readable.from(exportChunks(pages), { objectMode: false });
        // Headers are gone once the first chunk is out: a later failure can only cut the stream.
        body.on('error', (error) => request.log.error({ err: error, conversationId: conversation.id }, 'export stream failed'));
        // The 200 schema documents one line for OpenAPI; fastify sends a stream as it is, unserialized.
        return reply.type('application/x-ndjson; charset=utf-8').send(body as unknown as ExportLine);
      },
    );
  };
}
