import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

import type { CountTokens } from '../compaction/types.js';
import type { Config, TenantQuotas } from '../config/env.js';
import type { Db, Sql, Tx } from '../db/client.js';
import type { ConversationRow } from '../db/repos/conversations.js';
import type { AutoTriggerInputs } from '../db/repos/tenants.js';
import type { HostResolver } from '../lib/webhook-target.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { CompactionOptions } from '../queue/job-options.js';
import type { JobWaiters } from './job-waiters.js';
import type { CompactionDeferred } from './schemas/messages.js';

/**
 * Work an append's transaction leaves for after its commit (the queue must never see rows
 * that are not committed yet).
 */
export interface AppendEffects {
  /** webhook deliveries recorded in the transaction (e.g. `context.warning`) */
  webhookDeliveryIds: string[];
  /** `schedule: idle`: (re)arm the conversation's idle check after this many ms */
  idleCheckDelayMs: number | null;
  /** the auto compaction this append would have started, not started because the tenant is over a quota */
  compactionDeferred?: CompactionDeferred;
}

/** What the HTTP shell needs; the composition root supplies it. */
export interface ApiDeps {
  /** `anthropic`, `openai`, `summarizer`: which summarizer models requests and policies may name (llm/configured-models.ts) */
  config: Pick<Config, 'limits' | 'anthropic' | 'openai' | 'summarizer' | 'quotas'> &
    Partial<Pick<Config, 'adminToken' | 'metrics' | 'webhooks' | 'apiLimits' | 'longPoll'>>;
  /** resolves webhook hosts when a webhook is set; default the system resolver */
  resolveHost?: HostResolver;
  db: Db;
  sql: Sql;
  redis: Pick<Redis, 'ping'>;
  logger: Logger;
  countTokens: CountTokens;
  /**
   * Counts a text on another thread (app/token-count-pool.ts), for appends too big to count on
   * the event loop without stalling other requests; when absent, appends count inline.
   */
  countTokensOffLoop?: (text: string) => Promise<number>;
  /** how many threads `countTokensOffLoop` counts on */
  offLoopThreads?: number;
  /**
   * Runs in the append's transaction: decides whether the append triggers a compaction
   * (never when the append asked for `autoCompact: false`).
   */
  afterAppend(
    tx: Tx,
    conversation: ConversationRow,
    effects?: AppendEffects,
    options?: { autoCompact?: boolean; quotas?: TenantQuotas; jobOptions?: CompactionOptions; triggerInputs?: AutoTriggerInputs },
  ): Promise<{ id: string; status: string } | null>;
  /** Called after an append committed (not for idempotent replays), with what its transaction left to do. */
  onAppendCommitted?(conversationId: string, effects: AppendEffects): Promise<void> | void;
  /** Prometheus instruments served at /metrics; a private registry is made when absent */
  metrics?: Metrics;
  /** BullMQ queues shown by the dashboard at /admin/queues */
  dashboardQueues?: readonly Queue[];
  /** Hands committed webhook deliveries (e.g. `conversation.deleted`) to the queue; when absent, the stale-delivery sweep does. */
  webhookDeliveries?: { enqueue(deliveryId: string): Promise<void> };
  /** Long-polls of `GET /v1/jobs/:id?wait=`; when absent the job routes make their own over `db` and `sql`. */
  jobWaiters?: JobWaiters;
  /** Hands committed compaction jobs to the queue and relays cancellations to workers. */
  compactions: {
    /** the tenant orders the job among every tenant's work (queue/fair-share.ts) */
    enqueue(job: { id: string; tenantId: string }): Promise<void>;
    cancel(jobId: string): Promise<void>;
  };
}
