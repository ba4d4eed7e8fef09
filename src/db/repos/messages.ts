import { and, asc, eq, gt, type SQL, sql } from 'drizzle-orm';

import type { Block, MessageKind, NativeClip, Role } from '../../compaction/types.js';
import type { DbOrTx } from '../client.js';
import { compiledStatement, executePrepared, preparedPerHandle } from '../prepared.js';
import { archivedMessages, conversations, messages } from '../schema.js';

export type MessageRow = typeof messages.$inferSelect;

export interface NewMessage {
  role: Role;
  kind?: MessageKind;
  content: Block[];
  name?: string | undefined;
  tokens: number;
  toolUseIds: string[];
  toolResultIds: string[];
  usage?: { inputTokens?: number; outputTokens?: number } | undefined;
  metadata?: Record<string, unknown> | undefined;
  pinned?: boolean | undefined;
}

// run on every append: compiled once (see compiledStatement)
const insertReservedStatement = compiledStatement<
  { id: string; seq: string; tokens: number },
  { conversationId: string; count: number; payload: string }
>(sql`
  insert into ${messages} (conversation_id, seq, role, kind, content, name, tokens, tool_use_ids, tool_result_ids, usage, metadata, pinned)
  select ${sql.placeholder('conversationId')}, c.next_seq - ${sql.placeholder('count')}::int + e.ord - 1, e.m ->> 'r', e.m ->> 'k', e.m -> 'c', e.m ->> 'n', (e.m ->> 't')::int,
         array(select jsonb_array_elements_text(e.m -> 'u')), array(select jsonb_array_elements_text(e.m -> 'a')),
         nullif(e.m -> 'g', 'null'::jsonb), nullif(e.m -> 'd', 'null'::jsonb), (e.m ->> 'p')::boolean
    from jsonb_array_elements(${sql.placeholder('payload')}::jsonb) with ordinality as e(m, ord),
         (select next_seq from ${conversations} where id = ${sql.placeholder('conversationId')}) c
  returning id, seq, tokens`);

/**
 * Inserts an append's rows at the seqs its transaction just reserved (`recordAppend` moved the
 * conversation's `next_seq` past them; read from the row here, so the insert can follow the
 * update in one pipeline), returned in seq order. The rows travel as one jsonb parameter
 * expanded in SQL: a 500-row append is one parameter to serialize, not 5,500 bound values
 * built column by column.
 */
export async function insertReservedMessages(
  db: DbOrTx,
  conversationId: string,
  rows: readonly NewMessage[],
): Promise<Array<{ id: string; seq: number; tokens: number }>> {
  if (rows.length === 0) return [];
  const payload = JSON.stringify(
    rows.map((m) => ({
      r: m.role,
      k: m.kind ?? 'message',
      c: m.content,
      n: m.name ?? null,
      t: m.tokens,
      u: m.toolUseIds,
      a: m.toolResultIds,
      g: m.usage ?? null,
      d: m.metadata ?? null,
      p: m.pinned === true,
    })),
  );
  const inserted = await insertReservedStatement(db, { conversationId, count: rows.length, payload });
  return inserted.map((r) => ({ id: r.id, seq: Number(r.seq), tokens: r.tokens })).sort((a, b) => a.seq - b.seq);
}

export interface ToolPairingState {
  /** ids among those asked that a tool_use of the conversation (active or archived) already opened */
  opened: Set<string>;
  /** ids among those asked that a tool_result of the conversation already answers */
  answered: Set<string>;
}

/**
 * What the conversation already holds of these tool ids, in one statement: which were opened
 * (`opens`, checked against tool_use ids) and which answered (`answers`, against tool_result ids),
 * in the active history and the archive. No query at all when the append carries no tool blocks.
 */
export async function toolPairingState(
  db: DbOrTx,
  conversationId: string,
  opens: readonly string[],
  answers: readonly string[],
): Promise<ToolPairingState> {
  const state: ToolPairingState = { opened: new Set(), answered: new Set() };
  if (opens.length === 0 && answers.length === 0) return state;
  const opened = askedAmong([...new Set(opens)], 'tool_use_ids', conversationId);
  const answered = askedAmong([...new Set(answers)], 'tool_result_ids', conversationId);
  const rows = await executePrepared<{ kind: 'o' | 'a'; id: string }>(
    db,
    sql`
    select 'o' as kind, id from (${opened}) o
    union all
    select 'a' as kind, id from (${answered}) a`,
  );
  for (const row of rows) (row.kind === 'o' ? state.opened : state.answered).add(row.id);
  return state;
}

/** Up to this many asked ids, the ids' GIN indexes find the rows that hold any of them. */
const FEW_ASKED_IDS = 16;

/**
 * The asked ids that a row of the conversation (active or archived) holds in `column`. An agent's
 * append asks one or two ids: the GIN index finds their rows whatever the conversation's size
 * (3 ms against 19 ms for a scan at 50k messages). A bulk append asks hundreds: filtering each of
 * the conversation's rows with `ids && asked` compares every id of the row with every asked id
 * (135 ms at 50k rows with 250 asked), so the conversation's ids meet the asked ones in a join
 * instead (52 ms: the scan of the conversation's rows).
 */
function askedAmong(asked: readonly string[], column: 'tool_use_ids' | 'tool_result_ids', conversationId: string): SQL {
  const param = sql`${sql.param([...asked])}::text[]`;
  const ids = sql.raw(column);
  // a rewound original is no longer part of the conversation: its client sends its calls again
  const held = (table: typeof messages | typeof archivedMessages, extra: SQL = sql``) =>
    asked.length <= FEW_ASKED_IDS
      ? sql`select unnest(t.${ids}) from ${table} t where t.conversation_id = ${conversationId} and t.${ids} && ${param}${extra}`
      : sql`select held.id from ${table} t cross join lateral unnest(t.${ids}) as held(id) where t.conversation_id = ${conversationId} and cardinality(t.${ids}) > 0${extra}`;
  return sql`select asked.id from unnest(${param}) as asked(id) where asked.id in (${held(messages)} union all ${held(archivedMessages, sql` and t.reason <> 'rewound'`)})`;
}

export async function listActiveMessages(db: DbOrTx, conversationId: string, options: { after?: number; limit?: number } = {}) {
  const where =
    options.after === undefined
      ? eq(messages.conversationId, conversationId)
      : and(eq(messages.conversationId, conversationId), gt(messages.seq, options.after));
  const query = db.select().from(messages).where(where).orderBy(asc(messages.seq));
  return options.limit === undefined ? query : query.limit(options.limit);
}

/**
 * The conversation and its active history in one statement (the context request's only round
 * trip): the conversation row joined to its messages, so a conversation without messages is
 * one row of nulls and an unknown one no row.
 */
const historyByExternalId = preparedPerHandle((db) =>
  db
    .select({
      role: messages.role,
      kind: messages.kind,
      content: messages.content,
      // a clip-archive of strategy native: the provider's item and the state that goes beside it (SPEC §5.10)
      native: sql<NativeClip | null>`case when ${messages.metadata} ? 'providerCompaction'
        then jsonb_build_object('compaction', ${messages.metadata} -> 'providerCompaction',
                                'state', coalesce(${messages.metadata} ->> 'providerCompactionState', '')) end`,
    })
    .from(conversations)
    .leftJoin(messages, eq(messages.conversationId, conversations.id))
    .where(and(eq(conversations.tenantId, sql.placeholder('tenantId')), eq(conversations.externalId, sql.placeholder('externalId'))))
    .orderBy(asc(messages.seq))
    .prepare('active_history_by_external_id'),
);

export type ContextMessage = { role: Role; kind: MessageKind; content: Block[]; native: NativeClip | null };

/**
 * The active history as the context renders it (role and content, in order), read on every
 * context request; null when the tenant has no conversation of that id.
 */
export async function activeHistoryOf(db: DbOrTx, tenantId: string, externalId: string): Promise<ContextMessage[] | null> {
  const rows = await historyByExternalId(db).execute({ tenantId, externalId });
  if (rows.length === 0) return null;
  const history: ContextMessage[] = [];
  for (const { role, kind, content, native } of rows) {
    if (role !== null && kind !== null && content !== null) history.push({ role, kind, content, native });
  }
  return history;
}
