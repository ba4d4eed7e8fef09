/** Queue names and the key prefix (STYLE §3: never inline these strings). */
export const QUEUES = {
  /** plan and finalize: DB-bound, fast */
  compaction: 'compaction',
  /** one job per chunk: LLM-bound, parallel */
  summarize: 'summarize',
  /** housekeeping: the reconciler's repeatable sweep */
  maintenance: 'maintenance',
  /** webhook deliveries (one job per delivery, retried with backoff) */
  webhooks: 'webhooks',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * BullMQ key prefix wrapped in a Redis Cluster hash tag: every key of every queue lands in
 * one slot, which BullMQ's multi-key Lua scripts (and flows across queues) require.
 */
export function queuePrefix(prefix: string): string {
  return `{${prefix}}`;
}

/** Redis pub/sub channel on which cancellations reach every worker process. */
export function cancelChannel(prefix: string): string {
  return `${queuePrefix(prefix)}:cancel`;
}
