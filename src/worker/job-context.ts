import type { PlanRequest } from '../compaction/plan-types.js';
import { mergePolicy, type Policy, type PolicyOverride, PolicySchema } from '../config/policy.js';
import type { Db } from '../db/client.js';
import type { ConversationRow } from '../db/repos/conversations.js';
import { getJobWithConversation, type JobRow } from '../db/repos/jobs.js';
import { ACTIVE_JOB_STATUSES } from '../db/schema.js';
import { type CompactionOptions, CompactionOptionsSchema } from '../queue/job-options.js';

export interface JobContext {
  job: JobRow;
  conversation: ConversationRow;
  options: CompactionOptions;
  policy: Policy;
  request: PlanRequest;
}

export const isActive = (job: Pick<JobRow, 'status'>): boolean => ACTIVE_JOB_STATUSES.includes(job.status);

/**
 * Loads a job with its conversation and its policy (one query): the one frozen on the job at
 * plan time, or (before planning) the policy merged tenant → conversation → request.
 */
export async function loadJobContext(db: Db, jobId: string): Promise<JobContext | null> {
  const row = await getJobWithConversation(db, jobId);
  if (!row) return null;
  const { job, conversation, tenantPolicy } = row;
  const options = CompactionOptionsSchema.parse(job.options);
  const policy = job.policy ? frozenPolicy(job.policy) : mergePolicy(tenantPolicy, conversation.policy, requestOverrides(options));
  const request: PlanRequest = { trigger: job.trigger === 'idle' || job.trigger === 'consolidate' ? 'auto' : job.trigger };
  if (options.strategy) request.strategy = options.strategy;
  if (options.keepRecent !== undefined) request.keepRecent = options.keepRecent;
  if (options.target) {
    const { ratio, tokens } = options.target;
    request.target = ratio !== undefined ? { ratio } : tokens !== undefined ? { tokens } : {};
  }
  if (options.focus) request.focus = options.focus;
  return { job, conversation, options, policy, request };
}

/** The per-request policy fields a compaction's options carry. */
export function requestOverrides(options: CompactionOptions): PolicyOverride {
  const overrides: PolicyOverride = {};
  if (options.onLLMFailure) overrides.onLLMFailure = options.onLLMFailure;
  return overrides;
}

/** A policy frozen on a job row; parsed again so a job written by an older release gets today's defaults for new fields. */
export function frozenPolicy(stored: Record<string, unknown>): Policy {
  return PolicySchema.parse(stored);
}
