import type { Policy, PolicyOverride } from '../config/policy.js';
import type { PlanRequest } from '../compaction/plan-types.js';
import type { Db } from '../db/client.js';
import { getConversationById, type ConversationRow } from '../db/repos/conversations.js';
import { getJob, type JobRow } from '../db/repos/jobs.js';
import { conversationPolicy } from '../db/repos/tenants.js';
import { ACTIVE_JOB_STATUSES } from '../db/schema.js';
import { CompactionOptionsSchema, type CompactionOptions } from '../queue/job-options.js';

export interface JobContext {
  job: JobRow;
  conversation: ConversationRow;
  options: CompactionOptions;
  policy: Policy;
  request: PlanRequest;
}

export const isActive = (job: Pick<JobRow, 'status'>): boolean => ACTIVE_JOB_STATUSES.includes(job.status);

/** Loads a job with its conversation and the policy merged tenant → conversation → request. */
export async function loadJobContext(db: Db, jobId: string): Promise<JobContext | null> {
  const job = await getJob(db, jobId);
  if (!job) return null;
  const conversation = await getConversationById(db, job.conversationId);
  if (!conversation) return null;
  const options = CompactionOptionsSchema.parse(job.options);
  const requestPolicy: PolicyOverride = {};
  if (options.onLLMFailure) requestPolicy.onLLMFailure = options.onLLMFailure;
  const policy = await conversationPolicy(db, conversation, requestPolicy);
  const request: PlanRequest = { trigger: job.trigger === 'idle' ? 'auto' : job.trigger };
  if (options.strategy) request.strategy = options.strategy;
  if (options.keepRecent !== undefined) request.keepRecent = options.keepRecent;
  if (options.target) {
    const { ratio, tokens } = options.target;
    request.target = ratio !== undefined ? { ratio } : tokens !== undefined ? { tokens } : {};
  }
  if (options.focus) request.focus = options.focus;
  return { job, conversation, options, policy, request };
}
