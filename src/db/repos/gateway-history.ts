import { sql } from 'drizzle-orm';

import type { Block, MessageKind, NativeClip, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { archivedMessages, conversations, messages } from '../schema.js';
import { activeTotals, archiveMessages } from './compaction-writes.js';

/**
 * What the gateway stores of a client's history (api/gateway/): each message it stores carries
 * its history key (`m<position>-<hash>`) in `metadata.gatewayKey`, so the next request of the
 * same client is matched against the stored history by key.
 */
export const GATEWAY_KEY = 'gatewayKey';

export function positionOfKey(key: string): number | null {
  const match = /^m(\d+)-/.exec(key);
  return match ? Number(match[1]) : null;
}

export interface StoredKeys {
  /** position → key of every message the gateway stored, active or compacted (rewound ones are not the history any more) */
  keys: Map<number, string>;
  /** the first position still in the active history: positions below it are compacted (archived); the stored length when none is active */
  activeFrom: number;
}

/** The stored history keys of a conversation, active and compacted; rewound originals left the history. */
export async function readStoredKeys(db: Pick<DbOrTx, 'execute'>, conversationId: string): Promise<StoredKeys> {
  const rows = await db.execute<{ key: string; active: boolean }>(sql`
    select ${messages.metadata} ->> ${GATEWAY_KEY} as key, true as active from ${messages}
     where ${messages.conversationId} = ${conversationId} and ${messages.metadata} ? ${GATEWAY_KEY}
    union
    select ${archivedMessages.metadata} ->> ${GATEWAY_KEY}, false from ${archivedMessages}
     where ${archivedMessages.conversationId} = ${conversationId} and ${archivedMessages.metadata} ? ${GATEWAY_KEY}
       and ${archivedMessages.reason} <> 'rewound'`);
  const keys = new Map<number, string>();
  let activeFrom = Number.POSITIVE_INFINITY;
  let length = 0;
  for (const { key, active } of rows) {
    const position = positionOfKey(key);
    if (position === null) continue;
    // a masked or truncated message has its original in the archive too, under the same key
    keys.set(position, key);
    length = Math.max(length, position + 1);
    if (active) activeFrom = Math.min(activeFrom, position);
  }
  return { keys, activeFrom: Math.min(activeFrom, length) };
}

/** One active row as the gateway reads it to build the upstream request. */
export interface GatewayActiveRow {
  seq: number;
  kind: MessageKind;
  role: Role;
  /** the history key the gateway stored it under; null for rows it did not store (the clip-archive, API appends) */
  key: string | null;
  /** a compaction rewrote it in place (masked or truncated): its stored content differs from the client's */
  rewritten: boolean;
  /** read only for rows that are not sent as the client's own message */
  content: Block[] | null;
  /** a clip-archive of strategy native: the provider's item and compactd's state that goes beside it */
  native?: NativeClip;
}

/** The active history in seq order; content only for the rows not sent as the client's own message. */
export async function readActiveRows(db: Pick<DbOrTx, 'execute'>, conversationId: string): Promise<GatewayActiveRow[]> {
  const rows = await db.execute<{
    seq: string;
    kind: MessageKind;
    role: Role;
    key: string | null;
    rewritten: boolean;
    content: Block[] | null;
    native: NativeClip | null;
  }>(sql`
    select m.seq, m.kind, m.role, m.key, m.rewritten, case when m.key is null or m.rewritten then m.content end as content, m.native
      from (
        select ${messages.seq} as seq, ${messages.kind} as kind, ${messages.role} as role, ${messages.content} as content,
               case when ${messages.metadata} ? 'providerCompaction'
                    then jsonb_build_object('compaction', ${messages.metadata} -> 'providerCompaction',
                                            'state', coalesce(${messages.metadata} ->> 'providerCompactionState', ''))
               end as native,
               ${messages.metadata} ->> ${GATEWAY_KEY} as key,
               exists (select 1 from ${archivedMessages} a
                        where a.conversation_id = ${messages.conversationId} and a.seq = ${messages.seq} and a.reason in ('masked', 'truncated')) as rewritten
          from ${messages} where ${messages.conversationId} = ${conversationId}
      ) m
     order by m.seq`);
  return rows.map((row) => ({
    seq: Number(row.seq),
    kind: row.kind,
    role: row.role,
    key: row.key,
    rewritten: row.rewritten,
    content: row.content,
    ...(row.native ? { native: row.native } : {}),
  }));
}

/**
 * The gateway's client went back to an earlier point of its history (a retry, an edited or
 * rewound turn): the active rows from the one stored at history position `fromPosition` on
 * (and whatever was appended after it) leave the active history for the archive (reason
 * `rewound`, no job: recoverable like any original), and the counters follow. Runs under the
 * conversation lock, in the transaction that appends the client's turns instead. Returns how
 * many rows left.
 */
export async function rewindActiveHistory(tx: DbOrTx, conversationId: string, fromPosition: number): Promise<number> {
  const seqs = await tx.execute<{ seq: string }>(sql`
    with first as (
      select min(${messages.seq}) as seq from ${messages}
       where ${messages.conversationId} = ${conversationId} and ${messages.metadata} ? ${GATEWAY_KEY}
         and substring(${messages.metadata} ->> ${GATEWAY_KEY} from '^m([0-9]+)-')::int >= ${fromPosition})
    select ${messages.seq} as seq from ${messages}, first where ${messages.conversationId} = ${conversationId} and ${messages.seq} >= first.seq`);
  if (seqs.length === 0) return 0;
  const moved = await archiveMessages(tx, {
    conversationId,
    jobId: null,
    reason: 'rewound',
    seqs: seqs.map((r) => Number(r.seq)),
    remove: true,
  });
  const totals = await activeTotals(tx, conversationId);
  await tx.execute(sql`
    update ${conversations} set active_tokens = ${totals.tokens}, message_count = ${totals.messages}, version = version + 1, updated_at = now()
     where id = ${conversationId}`);
  return moved;
}

/**
 * A provider's compaction was stored at `clipSeq` (api/gateway/provider-clip.ts): the active
 * rows before it are what the provider compacted, which the client no longer sends. They leave
 * the active history for the archive (reason `rewound`, no job: recoverable like any original)
 * and the counters follow. Runs under the conversation lock, in the transaction that stores the
 * provider's item. Returns how many rows left.
 */
export async function archiveBeforeProviderClip(tx: DbOrTx, conversationId: string, clipSeq: number): Promise<number> {
  const seqs = await tx.execute<{ seq: string }>(sql`
    select ${messages.seq} as seq from ${messages} where ${messages.conversationId} = ${conversationId} and ${messages.seq} < ${clipSeq}`);
  if (seqs.length === 0) return 0;
  const moved = await archiveMessages(tx, {
    conversationId,
    jobId: null,
    reason: 'rewound',
    seqs: seqs.map((r) => Number(r.seq)),
    remove: true,
  });
  const totals = await activeTotals(tx, conversationId);
  await tx.execute(sql`
    update ${conversations} set active_tokens = ${totals.tokens}, message_count = ${totals.messages}, version = version + 1, updated_at = now()
     where id = ${conversationId}`);
  return moved;
}
