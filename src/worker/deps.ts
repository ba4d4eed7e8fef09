import type { Queue } from 'bullmq';

import type { CountTokens } from '../compaction/types.js';
import type { Config } from '../config/env.js';
import type { Db } from '../db/client.js';
import type { HostResolver, WebhookAllowList } from '../lib/webhook-target.js';
import type { Summarizers } from '../llm/create-summarizer.js';
import type { NativeCompactors } from '../llm/native-port.js';
import type { RetryPolicy } from '../llm/retry.js';
import type { Logger } from '../obs/logger.js';
import type { Metrics } from '../obs/metrics.js';
import type { Queues } from '../queue/producer.js';
import type { WebhookRetry } from '../queue/webhooks.js';
import type { CancelRegistry } from './cancel-registry.js';

/** What the worker shell needs; the composition root supplies it. */
export interface WorkerDeps {
  config: Pick<Config, 'summarizer' | 'queue' | 'llm'>;
  db: Db;
  logger: Logger;
  queues: Queues;
  summarizers: Summarizers;
  /** the providers' own compactions (strategy `native`); none where no provider is configured */
  compactors?: NativeCompactors;
  countTokens: CountTokens;
  cancels: CancelRegistry;
  /** the LLM retry layer's policy (the worker defers what it will not wait for) */
  retryPolicy: RetryPolicy;
  /** observers of job outcomes (metrics, webhooks); must not throw */
  onJobFinished?(event: JobFinishedEvent): void;
  /** Prometheus instruments; absent where nothing scrapes them */
  metrics?: Metrics;
  /** webhook deliveries: the queue and the retry/timeout settings */
  webhooks?: WebhookSettings;
}

export interface JobFinishedEvent {
  jobId: string;
  /** internal conversation id (compaction_jobs.conversation_id) */
  conversationId: string;
  tenantId: string;
  status: string;
  trigger: string;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  /** the webhook delivery the job's terminal transaction recorded, to enqueue */
  deliveryId?: string | null;
}

export interface WebhookSettings extends WebhookRetry {
  queue: Queue;
  /** per-attempt HTTP timeout */
  timeoutMs: number;
  /** targets allowed although not public (COMPACTD_WEBHOOK_ALLOW) */
  allow: WebhookAllowList;
  /** resolves a target's host name at connect time; default the system resolver */
  resolveHost?: HostResolver;
}
