import type { ConversationRow } from '../db/repos/conversations.js';
import { publicJob } from '../db/repos/job-view.js';
import type { JobRow } from '../db/repos/jobs.js';
import type { MessageRow } from '../db/repos/messages.js';
import type { Conversation } from './schemas/conversations.js';
import type { JobView } from './schemas/jobs.js';

/** Tokens the next model call will carry: provider-reported usage wins over our own count. */
export function effectiveTokens(row: Pick<ConversationRow, 'activeTokens' | 'reportedInputTokens'>): number {
  return Math.max(row.activeTokens, row.reportedInputTokens ?? 0);
}

export function toConversationView(row: ConversationRow, lastJob: { id: string; status: string } | null): Conversation {
  return {
    id: row.externalId,
    model: row.model,
    contextLimit: row.contextLimit,
    messageCount: row.messageCount,
    activeTokens: row.activeTokens,
    contextUsage: { ratio: Math.round((effectiveTokens(row) / row.contextLimit) * 10_000) / 10_000, warning: row.warning },
    compactionCount: row.compactionCount,
    lastJob,
    policy: row.policy,
    metadata: row.metadata,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toMessageView(row: MessageRow) {
  return {
    id: row.id,
    seq: row.seq,
    role: row.role,
    kind: row.kind,
    content: row.content as unknown as Array<Record<string, unknown>>,
    ...(row.name ? { name: row.name } : {}),
    tokens: row.tokens,
    ...(row.metadata?.['meta'] === true && row.role === 'user' ? { meta: true as const } : {}),
    pinned: row.pinned,
    createdAt: row.createdAt.toISOString(),
  };
}

export function toJobView(row: JobRow, conversationExternalId: string, deduplicated?: boolean): JobView {
  return { ...publicJob(row, conversationExternalId), ...(deduplicated === undefined ? {} : { deduplicated }) };
}
