import { z } from 'zod';

import { timestampSchema } from './common.js';

export const JobSchema = z
  .object({
    id: z.uuid(),
    conversationId: z.string(),
    status: z.enum(['queued', 'planning', 'summarizing', 'resummarizing', 'committing', 'completed', 'noop', 'failed', 'cancelled']),
    trigger: z.enum(['api', 'auto', 'tool', 'idle', 'consolidate']),
    options: z.record(z.string(), z.unknown()),
    progress: z.object({ chunksDone: z.number().int(), chunksTotal: z.number().int() }),
    result: z.record(z.string(), z.unknown()).nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    deduplicated: z.boolean().optional(),
  })
  .meta({ id: 'Job' });
export type JobView = z.infer<typeof JobSchema>;

export const JobWaitQuerySchema = z.object({
  wait: z.coerce.number().min(0).max(60).optional().meta({ description: 'long-poll up to this many seconds for a terminal status' }),
});

export const ListJobsQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: timestampSchema().optional().meta({ description: 'createdAt of the last job of the previous page' }),
});

export const ListJobsResponseSchema = z.object({ jobs: z.array(JobSchema), nextBefore: z.string().nullable() });

export const ForgottenResponseSchema = z
  .object({
    jobId: z.uuid(),
    conversationId: z.string(),
    /** false when the job recorded nothing (not a completed compaction, or one written before the record existed) */
    recorded: z.boolean(),
    total: z.number().int(),
    byKind: z.object({ path: z.number().int(), command: z.number().int(), error: z.number().int(), id: z.number().int() }),
    names: z.array(
      z.object({
        kind: z.enum(['path', 'command', 'error', 'id']),
        name: z.string(),
        /** the archive search that recalls the name */
        recall: z.string(),
      }),
    ),
  })
  .meta({ id: 'Forgotten' });
