import { z } from 'zod';

import { BlockSchema, safeText } from './common.js';

/** Archive reads (SPEC §5.8, §6.1): batches, the originals behind them, export, search. */

const RoleSchema = z.enum(['system', 'user', 'assistant', 'tool']);
const ReasonSchema = z.enum(['summarized', 'masked', 'truncated', 'rewound']).nullable().meta({
  description:
    "why the message was last archived: summarized (out of the active history), masked or truncated (a rewritten version is active), rewound (the gateway's client went back to an earlier point of its history and no longer sends it); null while active as appended",
});
/** What an original carries besides its content (api/routes/original-fields.ts): enough to append it again as it was. */
const OriginalFieldsShape = {
  metadata: z.record(z.string(), z.unknown()).optional().meta({
    description:
      'the metadata the message was appended with (an importer’s fields such as `uuid`, `timestamp`, `model`; `meta`); absent when none',
  }),
  meta: z.literal(true).optional().meta({
    description:
      'a meta turn (harness notification, wrapper, tool or environment output), as the message listing says it: never the user’s request',
  }),
  usage: z
    .object({ inputTokens: z.number().int().optional(), outputTokens: z.number().int().optional() })
    .optional()
    .meta({ description: 'the provider usage the message was appended with' }),
  pinned: z
    .boolean()
    .meta({ description: 'the seq is pinned now (only an active message can be; a masked one keeps its pin here beside its original)' }),
};

const BatchIdRefSchema = z
  .uuid()
  .nullable()
  .meta({ description: 'the level-0 batch whose summary covers the message; null unless summarized' });

export const BatchSchema = z
  .object({
    id: z.uuid(),
    conversationId: z.string(),
    jobId: z.uuid().meta({ description: 'the compaction that wrote the batch' }),
    level: z.number().int().meta({ description: '0: a summarized chunk of messages; ≥ 1: a re-summary of lower-level batches' }),
    summary: z.string(),
    seqs: z.array(z.number().int()).meta({ description: 'seqs of the original messages covered (through absorbed batches for level ≥ 1)' }),
    seqRanges: z.string().meta({ description: 'the same seqs as ranges, e.g. "1-40,52"' }),
    sourceMessages: z.number().int(),
    sourceTokens: z.number().int(),
    summaryTokens: z.number().int(),
    model: z.string(),
    supersededBy: z
      .uuid()
      .nullable()
      .meta({ description: 'the higher-level batch that absorbed this one; null while live in the clip-archive' }),
    createdAt: z.string(),
  })
  .meta({ id: 'Batch' });
export type BatchView = z.infer<typeof BatchSchema>;

export const ListBatchesQuerySchema = z.object({
  level: z.coerce.number().int().min(0).max(1000).optional(),
  live: z.stringbool().optional().meta({ description: 'true: only batches carried by the clip-archive; false: only absorbed ones' }),
  after: z.uuid().optional().meta({ description: 'id of the last batch of the previous page (`nextAfter`)' }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const ListBatchesResponseSchema = z.object({
  batches: z.array(BatchSchema).meta({ description: 'oldest first: by creation, then by first seq covered' }),
  nextAfter: z.uuid().nullable(),
});

export const OriginalMessageSchema = z
  .object({
    id: z.uuid(),
    seq: z.number().int(),
    role: RoleSchema,
    kind: z.literal('message'),
    content: z.array(BlockSchema),
    name: z.string().optional(),
    ...OriginalFieldsShape,
    tokens: z.number().int(),
    createdAt: z.string(),
    archived: z.boolean(),
    reason: ReasonSchema,
    batchId: BatchIdRefSchema,
  })
  .meta({ id: 'OriginalMessage', description: 'a message as it was appended' });

export const BatchMessagesQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

export const BatchMessagesResponseSchema = z.object({
  messages: z.array(OriginalMessageSchema),
  nextAfter: z.number().int().nullable(),
});

export const ExportQuerySchema = z.object({
  clipArchive: z
    .stringbool()
    .default(true)
    .meta({ description: 'include the active clip-archive message (after the original of the same seq); false: appended messages only' }),
});

/** One NDJSON line of an export (documented here; the route streams text). */
export const ExportLineSchema = z
  .object({
    seq: z.number().int(),
    role: RoleSchema,
    kind: z.enum(['message', 'clip_archive']),
    content: z.array(BlockSchema),
    name: z.string().optional(),
    ...OriginalFieldsShape,
    archived: z.boolean(),
    reason: ReasonSchema,
    batchId: BatchIdRefSchema,
  })
  .meta({
    id: 'ExportLine',
    description:
      'one line of application/x-ndjson; lines are in seq order. A `message` line appends again as it was appended: its role, content, name, metadata, usage and pin',
  });
export type ExportLine = z.infer<typeof ExportLineSchema>;

export const SearchQuerySchema = z.object({
  q: safeText({ max: 1000 }).trim().min(1, 'must not be empty').meta({
    description:
      'a fragment (path, file name, command, error text, id: matched as a substring) or web-search syntax: words, "quoted phrases", OR, -excluded',
  }),
  limit: z.coerce.number().int().min(1).max(100).default(10),
});

export const SearchHitSchema = z
  .object({
    seq: z.number().int(),
    role: RoleSchema,
    batchId: BatchIdRefSchema,
    jobId: z
      .uuid()
      .nullable()
      .meta({ description: 'the compaction that archived the original; null for an original the gateway archived as rewound' }),
    rank: z.number(),
    snippet: z.string().meta({ description: 'matching fragments, matches in **bold**' }),
    tool: z
      .string()
      .nullable()
      .meta({ description: 'the tool of the first matching line (its tool call or tool result); null for plain text' }),
    match: z.enum(['fragment', 'words']).meta({
      description: '`fragment`: the query is a substring of a line (rank 1 + the full-text rank); `words`: a full-text match only',
    }),
    lines: z
      .array(
        z.object({
          line: z.number().int().meta({ description: "1-based line of the message's text (its blocks' lines, in order)" }),
          text: z.string().meta({ description: 'the line, cut to 240 characters around the match' }),
          match: z.boolean().meta({ description: 'false for a line of context' }),
        }),
      )
      .meta({ description: 'the first matching lines (at most 3), each with the line before and after' }),
  })
  .meta({ id: 'ArchiveSearchHit' });

export const SearchResponseSchema = z.object({ hits: z.array(SearchHitSchema) });
