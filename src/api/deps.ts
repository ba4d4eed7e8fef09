import type { Redis } from 'ioredis';
import type postgres from 'postgres';
import type { CountTokens } from '../compaction/types.js';
import type { Config } from '../config/env.js';
import type { Db, Tx } from '../db/client.js';
import type { ConversationRow } from '../db/repos/conversations.js';
import type { Logger } from '../obs/logger.js';

/** What the HTTP shell needs; the composition root supplies it. */
export interface ApiDeps {
  config: Pick<Config, 'limits'>;
  db: Db;
  sql: postgres.Sql;
  redis: Pick<Redis, 'ping'>;
  logger: Logger;
  countTokens: CountTokens;
  /** Runs in the append's transaction: decides whether the append triggers a compaction. */
  afterAppend(tx: Tx, conversation: ConversationRow): Promise<{ id: string; status: string } | null>;
  /** Called after an append committed (not for idempotent replays). */
  onAppendCommitted?(conversationId: string): void;
  /** Hands committed compaction jobs to the queue and relays cancellations to workers. */
  compactions: {
    enqueue(jobId: string): Promise<void>;
    cancel(jobId: string): Promise<void>;
  };
}
