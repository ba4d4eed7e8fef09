import type { Config } from '../config/env.js';
import type { CountTokens } from '../compaction/types.js';
import type { Db } from '../db/client.js';
import type { Summarizers } from '../llm/create-summarizer.js';
import type { Logger } from '../obs/logger.js';
import type { Queues } from '../queue/producer.js';
import type { CancelRegistry } from './cancel-registry.js';

/** What the worker shell needs; the composition root supplies it. */
export interface WorkerDeps {
  config: Pick<Config, 'summarizer' | 'queue' | 'llm'>;
  db: Db;
  logger: Logger;
  queues: Queues;
  summarizers: Summarizers;
  countTokens: CountTokens;
  cancels: CancelRegistry;
  /** observers of job outcomes (metrics, webhooks); must not throw */
  onJobFinished?(event: { jobId: string; conversationId: string; tenantId: string; status: string; trigger: string }): void;
}
