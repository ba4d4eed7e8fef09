import { Readable } from 'node:stream';

import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

import { mergeAllLedgers } from '../../compaction/ledger/index.js';
import { listOriginals, streamHistory } from '../../db/repos/archive.js';
import { searchArchive } from '../../db/repos/archive-search.js';
import { listChunks } from '../../db/repos/chunks.js';
import { listTenantConversations, parentExternalIdOf } from '../../db/repos/conversation-list.js';
import { loadForgotten } from '../../db/repos/forgotten.js';
import {
  activeClipArchive,
  activePage,
  batchesStartingIn,
  findBatch,
  findJob,
  jobsForGauge,
  listConversations,
  liveLedgers,
  treeBatches,
} from '../../db/repos/inspector.js';
import { notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import { EXPORT_PAGE_BYTES, EXPORT_PAGE_SIZE, exportChunks } from '../routes/export.js';
import { ConversationIdSchema, UuidParamsSchema } from '../schemas/common.js';
import type { SearchSlots } from '../search-slots.js';
import { actionRoutes } from './action-routes.js';
import { ASSET_TYPES, loadAssets } from './assets.js';
import type { Html } from './html.js';
import { requireConversation } from './lookups.js';
import { inspectAuth, securityHeaders } from './security.js';
import type { Viewer } from './viewer.js';
import { conversationPage, originalsFragment } from './views/conversation.js';
import { jobLive, jobPage, type JobPageData } from './views/job.js';
import { conversationListPage } from './views/list.js';

/** Messages of one history page and originals of one batch page: a 100,000-message conversation opens as fast as a short one. */
export const HISTORY_PAGE = 100;
export const ORIGINALS_PAGE = 50;
const LIST_LIMIT = 100;
/** jobs drawn on the gauge, batches in the tree: bounded however long the conversation lives */
const GAUGE_JOBS = 200;
const TREE_BATCHES = 400;
/** sub-agents and threads listed on a conversation's page */
const FAMILY_PAGE = 50;
/** archived stretches folded into one history page at most: a page ends before the next one */
export const FOLDS_PAGE = 20;

const seqCursor = (field: string) =>
  z.coerce
    .number({ error: `${field} must be a number` })
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .default(0);
const TenantQuery = { tenant: z.uuid('must be a UUID').optional() };

const sendHtml = (reply: FastifyReply, body: Html, status = 200) => reply.status(status).type('text/html; charset=utf-8').send(body.value);

async function jobData(deps: Pick<ApiDeps, 'db'>, viewer: Viewer, id: string): Promise<JobPageData> {
  const job = await findJob(deps.db, viewer.scope, id);
  if (!job) throw notFound('job', id);
  const [chunks, forgotten] = await Promise.all([listChunks(deps.db, job.id), loadForgotten(deps.db, job.id)]);
  let causedBy: string | null = null;
  if (job.trigger === 'consolidate') {
    const jobs = await jobsForGauge(deps.db, job.conversationId, GAUGE_JOBS);
    causedBy = jobs.find((j) => j.result?.['consolidationJobId'] === job.id)?.id ?? null;
  }
  return { job, chunks, forgotten, causedBy };
}

/**
 * The inspector (SPEC §6.2): server-rendered pages over the same data as the JSON API, one
 * stylesheet and one script from this process, a strict CSP. Everything the pages show from
 * a conversation goes through `html` (escaped as text). A recall search holds one of
 * `searchSlots`, the API's: it counts against the conversation's tenant like the search route.
 */
export function inspectRoutes(deps: ApiDeps, searchSlots: SearchSlots): FastifyPluginAsyncZod {
  return async (app) => {
    const assets = loadAssets();
    app.addHook('onSend', securityHeaders);

    // the assets hold no data: served without credentials, cacheable for a short while
    app.get(
      '/inspect/assets/:file',
      { schema: { hide: true, params: z.object({ file: z.enum(Object.keys(ASSET_TYPES) as [string, ...string[]]) }) } },
      async (request, reply) => {
        const { file } = request.params;
        return reply
          .type(ASSET_TYPES[file] as string)
          .header('cache-control', 'private, max-age=300')
          .send(assets.get(file));
      },
    );

    await app.register(async (plain) => {
      const pages = plain.withTypeProvider<ZodTypeProvider>();
      pages.addHook('onRequest', inspectAuth(deps.db, deps.config.adminToken));

      pages.get(
        '/inspect',
        { schema: { hide: true, querystring: z.object({ q: z.string().trim().max(256).default('') }) } },
        async (request, reply) => {
          const viewer = request.inspectViewer;
          const items = await listConversations(deps.db, viewer.scope, { search: request.query.q, limit: LIST_LIMIT });
          return sendHtml(reply, conversationListPage(viewer, items, request.query.q, LIST_LIMIT));
        },
      );

      pages.get(
        '/inspect/conversations/:id',
        {
          schema: {
            hide: true,
            params: z.object({ id: ConversationIdSchema }),
            querystring: z.object({
              after: seqCursor('after'),
              q: z.string().trim().max(1000).optional(),
              open: z.uuid('must be a UUID').optional(),
              at: z.coerce.number().int().min(0).optional(),
              notice: z.enum(['reverted']).optional(),
              ...TenantQuery,
            }),
          },
        },
        async (request, reply) => {
          const viewer = request.inspectViewer;
          const { q, open, at, notice, tenant } = request.query;
          const conversation = await requireConversation(deps, viewer, request.params.id, tenant);
          // a recall hit's link opens its batch: the history page then starts at that batch
          const found = open ? await findBatch(deps.db, viewer.scope, open) : null;
          const openBatch = found && found.conversationId === conversation.id && found.level === 0 ? found : null;
          const after = openBatch && request.query.after === 0 ? Math.max(0, (openBatch.seqs[0] ?? 1) - 1) : request.query.after;
          // refused (429) before the page's reads start when the tenant's searches are all taken
          const search = q
            ? searchSlots.run(conversation.tenantId, () => searchArchive(deps.db, conversation.id, { query: q, limit: 20 }))
            : Promise.resolve(null);
          const [page, jobs, clipArchive, tree, ledgers, hits, parent, children] = await Promise.all([
            activePage(deps.db, conversation.id, after, HISTORY_PAGE + 1),
            jobsForGauge(deps.db, conversation.id, GAUGE_JOBS),
            activeClipArchive(deps.db, conversation),
            treeBatches(deps.db, conversation.id, TREE_BATCHES),
            liveLedgers(deps.db, conversation.id),
            search,
            parentExternalIdOf(deps.db, conversation.id),
            listTenantConversations(deps.db, conversation.tenantId, { parentExternalId: conversation.externalId, limit: FAMILY_PAGE + 1 }),
          ]);
          const batches = tree.rows;
          let shown = page.slice(0, HISTORY_PAGE);
          let nextAfter = page.length > HISTORY_PAGE ? (shown.at(-1)?.seq ?? null) : null;
          // a page holds at most HISTORY_PAGE messages and FOLDS_PAGE folded batches: past either it ends
          let folded = await batchesStartingIn(deps.db, conversation.id, after, nextAfter, FOLDS_PAGE + 1);
          const overflow = folded[FOLDS_PAGE];
          if (overflow) {
            const cut = (overflow.seqs[0] as number) - 1;
            folded = folded.slice(0, FOLDS_PAGE);
            shown = shown.filter((m) => m.seq <= cut);
            nextAfter = cut;
          }
          let opened = null;
          if (openBatch) {
            // the page of originals that holds the hit, starting a couple of messages before it
            const from = Math.max(0, (at ?? 0) - 3);
            const originals = await listOriginals(deps.db, conversation.id, {
              seqs: openBatch.seqs,
              after: from,
              limit: ORIGINALS_PAGE + 1,
            });
            const rows = originals.slice(0, ORIGINALS_PAGE);
            opened = {
              batchId: openBatch.id,
              originals: rows,
              nextAfter: originals.length > ORIGINALS_PAGE ? (rows.at(-1)?.seq ?? null) : null,
            };
          }
          const ledger = ledgers.length > 0 ? mergeAllLedgers(ledgers) : null;
          return sendHtml(
            reply,
            conversationPage(viewer, {
              conversation,
              jobs,
              history: { after, limit: HISTORY_PAGE, messages: shown, batches: folded, nextAfter },
              opened,
              clipArchive,
              batches,
              batchTotal: tree.total,
              ledger,
              recall: q && hits ? { query: q, hits } : null,
              notice: notice === 'reverted' ? 'The compaction was reverted: its originals are back in the history.' : null,
              family: { parent, children: children.slice(0, FAMILY_PAGE), more: children.length > FAMILY_PAGE },
            }),
          );
        },
      );

      pages.get(
        '/inspect/batches/:id/originals',
        { schema: { hide: true, params: UuidParamsSchema, querystring: z.object({ after: seqCursor('after') }) } },
        async (request, reply) => {
          const batch = await findBatch(deps.db, request.inspectViewer.scope, request.params.id);
          if (!batch) throw notFound('batch', request.params.id);
          const rows = await listOriginals(deps.db, batch.conversationId, {
            seqs: batch.seqs,
            after: request.query.after,
            limit: ORIGINALS_PAGE + 1,
          });
          const shown = rows.slice(0, ORIGINALS_PAGE);
          return sendHtml(
            reply,
            originalsFragment(request.inspectViewer, batch, shown, rows.length > ORIGINALS_PAGE ? (shown.at(-1)?.seq ?? null) : null),
          );
        },
      );

      pages.get('/inspect/jobs/:id', { schema: { hide: true, params: UuidParamsSchema } }, async (request, reply) =>
        sendHtml(reply, jobPage(request.inspectViewer, await jobData(deps, request.inspectViewer, request.params.id))),
      );

      // the live part of the job page, re-fetched by the page's script while the job runs
      pages.get('/inspect/jobs/:id/live', { schema: { hide: true, params: UuidParamsSchema } }, async (request, reply) =>
        sendHtml(reply, jobLive(request.inspectViewer, await jobData(deps, request.inspectViewer, request.params.id))),
      );

      pages.get(
        '/inspect/conversations/:id/export.jsonl',
        { schema: { hide: true, params: z.object({ id: ConversationIdSchema }), querystring: z.object(TenantQuery) } },
        async (request, reply) => {
          const conversation = await requireConversation(deps, request.inspectViewer, request.params.id, request.query.tenant);
          const pages = streamHistory(deps.db, conversation.id, {
            pageSize: EXPORT_PAGE_SIZE,
            maxPageBytes: EXPORT_PAGE_BYTES,
            includeClipArchive: true,
          });
          const body = Readable.from(exportChunks(pages), { objectMode: false });
          body.on('error', (error) => request.log.error({ err: error, conversationId: conversation.id }, 'inspector export stream failed'));
          return reply
            .type('application/x-ndjson; charset=utf-8')
            .header('content-disposition', `attachment; filename="${conversation.externalId}.jsonl"`)
            .send(body);
        },
      );

      await pages.register(actionRoutes(deps));
    });
  };
}
