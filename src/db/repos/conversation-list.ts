import { and, asc, eq, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';

import type { DbOrTx } from '../client.js';
import { conversations } from '../schema.js';

/** Where a page starts: just after the conversation created at `createdAt` (microseconds, as `cursorAt`) with this external id. */
export interface ListPosition {
  createdAt: string;
  externalId: string;
}

export interface ListConversationsParams {
  limit: number;
  after?: ListPosition;
  /** only conversations whose `metadata.createdBy` is this string */
  createdBy?: string;
  /** only the children of the tenant's conversation with this external id */
  parentExternalId?: string;
  /** only conversations updated at or after this instant */
  updatedSince?: Date;
}

export interface ListedConversation {
  externalId: string;
  model: string | null;
  contextLimit: number;
  activeTokens: number;
  activeMessages: number;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string | null;
  parentExternalId: string | null;
  /** `createdAt` to the microsecond (ISO, UTC): a position built from it starts the next page exactly after this row */
  cursorAt: string;
}

const parent = alias(conversations, 'parent');
/** the parent named by a filter (its own alias: the joined `parent` is each row's) */
const namedParent = alias(conversations, 'named_parent');
const createdByOf = sql`${conversations.metadata} -> 'createdBy'`;

/**
 * The tenant's conversations, oldest first (creation, then external id: unique per tenant,
 * so the order is total), keyset-paginated over `conversations_tenant_created_idx`. The
 * position is values, not a row to look up: a page still follows when the previous page's
 * last conversation was erased meanwhile.
 */
export async function listTenantConversations(
  db: DbOrTx,
  tenantId: string,
  params: ListConversationsParams,
): Promise<ListedConversation[]> {
  const conditions: SQL[] = [eq(conversations.tenantId, tenantId)];
  if (params.after) {
    conditions.push(
      sql`(${conversations.createdAt}, ${conversations.externalId}) > (${params.after.createdAt}::timestamptz, ${params.after.externalId})`,
    );
  }
  // a string equal to the filter: metadata holding a number or an object there is not "created by" anything
  if (params.createdBy !== undefined) conditions.push(sql`${createdByOf} = to_jsonb(${params.createdBy}::text)`);
  if (params.updatedSince) conditions.push(sql`${conversations.updatedAt} >= ${params.updatedSince.toISOString()}::timestamptz`);
  if (params.parentExternalId !== undefined) {
    // the parent's id first, so the children are found by conversations_parent_idx (none when there is no such parent)
    const parentId = db
      .select({ id: namedParent.id })
      .from(namedParent)
      .where(and(eq(namedParent.tenantId, tenantId), eq(namedParent.externalId, params.parentExternalId)));
    conditions.push(sql`${conversations.parentId} = (${parentId})`);
  }
  return db
    .select({
      externalId: conversations.externalId,
      model: conversations.model,
      contextLimit: conversations.contextLimit,
      activeTokens: conversations.activeTokens,
      activeMessages: conversations.messageCount,
      createdAt: conversations.createdAt,
      updatedAt: conversations.updatedAt,
      createdBy: sql<string | null>`case when jsonb_typeof(${createdByOf}) = 'string' then ${conversations.metadata} ->> 'createdBy' end`,
      parentExternalId: parent.externalId,
      cursorAt: sql<string>`to_char(${conversations.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
    })
    .from(conversations)
    .leftJoin(parent, eq(parent.id, conversations.parentId))
    .where(and(...conditions))
    .orderBy(asc(conversations.createdAt), asc(conversations.externalId))
    .limit(params.limit);
}

/** The external id of the conversation `conversationId` was started from (a sub-agent's parent), or null. */
export async function parentExternalIdOf(db: DbOrTx, conversationId: string): Promise<string | null> {
  const [row] = await db
    .select({ externalId: parent.externalId })
    .from(conversations)
    .innerJoin(parent, eq(parent.id, conversations.parentId))
    .where(eq(conversations.id, conversationId));
  return row?.externalId ?? null;
}
