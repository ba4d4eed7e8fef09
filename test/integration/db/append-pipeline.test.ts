import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { prepareAppend, storeAppend } from '../../../src/api/append-messages.js';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { createDb, type DbHandle } from '../../../src/db/client.js';
import { type ConversationRow, getConversation } from '../../../src/db/repos/conversations.js';
import { autoTriggerInputs } from '../../../src/db/repos/tenants.js';
import { conversations, messages, tenants } from '../../../src/db/schema.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { AppError } from '../../../src/lib/errors.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * An append's statements (the conversation lock, the tool-pairing read, the counters' update,
 * the rows' insert, the trigger's read) leave as one pipeline of prepared statements: sent
 * together, run by Postgres one after another. These tests hold the conversation lock in
 * another session, so the append waits at its first statement, and look at what was sent
 * meanwhile; and they check what the pipeline must keep: seqs without gaps or overlaps under
 * concurrent appends, and nothing stored when the pairing check rejects an append whose
 * writes already ran.
 */

let db: TestDatabase;
/** one connection, so the statements prepared by the warm-up are the ones the tests run */
let single: DbHandle;
let sent: string[] = [];
let tenantId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  single = createDb(db.url, { max: 1, name: 'compactd-append-pipeline', onQuery: (query) => sent.push(query) });
  const [tenant] = await db.db.insert(tenants).values({ name: 'append-pipeline' }).returning();
  tenantId = tenant!.id;
});
afterAll(async () => {
  await single?.close();
  await db?.close();
});

async function newConversation(externalId: string): Promise<ConversationRow> {
  await db.db.insert(conversations).values({ tenantId, externalId, contextLimit: 100_000 });
  return (await getConversation(db.db, tenantId, externalId))!;
}

const text = (role: 'user' | 'assistant', body: string): NormalizedMessage => ({ role, content: [{ type: 'text', text: body }] });
const call = (id: string): NormalizedMessage => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'bash', input: { command: 'ls' } }],
});
const result = (id: string): NormalizedMessage => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'a b' }] });

const prepared = (batch: NormalizedMessage[]) =>
  prepareAppend({ format: 'anthropic', messages: batch }, { countTokens, maxMessageBytes: 1_000_000 });

/** The append as the route runs it: the store and the trigger's read in one transaction. */
function appendAsTheRouteDoes(handle: DbHandle, conversation: ConversationRow, batch: NormalizedMessage[]) {
  return handle.db.transaction((tx) => Promise.all([storeAppend(tx, conversation, prepared(batch)), autoTriggerInputs(tx, conversation)]));
}

async function counters(id: string) {
  const [row] = await db.db.select().from(conversations).where(eq(conversations.id, id));
  const rows = await db.db.select({ seq: messages.seq }).from(messages).where(eq(messages.conversationId, id));
  return {
    messageCount: row!.messageCount,
    nextSeq: row!.nextSeq,
    activeTokens: row!.activeTokens,
    seqs: rows.map((r) => r.seq).sort((a, b) => a - b),
  };
}

describe('an append pipeline', () => {
  it('sends every statement after the lock before the lock is granted', async () => {
    const conversation = await newConversation('pipelined');
    // the connection prepares the statements once (described first, so not yet pipelined)
    await appendAsTheRouteDoes(single, conversation, [call('t0'), result('t0')]);

    const holder = await db.sql.reserve();
    let held = false;
    try {
      await holder`begin`;
      held = true;
      await holder`select pg_advisory_xact_lock(hashtextextended(${conversation.id}, 0))`;
      sent = [];
      const appended = appendAsTheRouteDoes(single, conversation, [call('t1'), result('t1')]);
      // the append now waits for the lock, its first statement
      await expect
        .poll(
          async () =>
            (
              await db.sql`select count(*)::int as n from pg_stat_activity where application_name = 'compactd-append-pipeline' and wait_event_type = 'Lock'`
            )[0]!['n'],
          { timeout: 5_000 },
        )
        .toBe(1);
      const kinds = sent.map((query) =>
        /pg_advisory_xact_lock/.test(query)
          ? 'lock'
          : /tool_use_ids/.test(query) && /^\s*select/.test(query)
            ? 'pairing'
            : /^\s*update/.test(query)
              ? 'counters'
              : /^\s*insert into "messages"/.test(query)
                ? 'rows'
                : /active_job/.test(query)
                  ? 'trigger'
                  : query.trim().split(/\s+/)[0]!,
      );
      expect(kinds).toEqual(['begin', 'lock', 'pairing', 'counters', 'rows', 'trigger']);
      await holder`commit`;
      held = false;
      const [stored, trigger] = await appended;
      expect(stored.inserted.map((m) => m.seq)).toEqual([3, 4]);
      expect(stored.conversation.nextSeq).toBe(5);
      expect(trigger.activeJob).toBe(false);
    } finally {
      // a failed check must not leave the lock held for the tests after this one
      if (held) await holder`rollback`;
      holder.release();
    }
    expect(await counters(conversation.id)).toMatchObject({ messageCount: 4, nextSeq: 5, seqs: [1, 2, 3, 4] });
  });

  it('stores nothing when the pairing check rejects an append whose writes already ran', async () => {
    const conversation = await newConversation('rejected');
    await appendAsTheRouteDoes(single, conversation, [text('user', 'list the files'), call('t1'), result('t1')]);
    const before = await counters(conversation.id);

    const rejected = (batch: NormalizedMessage[]) =>
      appendAsTheRouteDoes(single, conversation, batch).then(
        () => null,
        (error: unknown) => (error instanceof AppError ? error.code : String(error)),
      );
    expect(await rejected([text('assistant', 'again'), result('t1')])).toBe('DUPLICATE_TOOL_RESULT');
    expect(await rejected([result('t9')])).toBe('ORPHAN_TOOL_RESULT');
    expect(await rejected([call('t1')])).toBe('DUPLICATE_TOOL_USE_ID');
    expect(await counters(conversation.id)).toEqual(before);

    // and the connection goes on: the next append takes the next seq
    const [stored] = await appendAsTheRouteDoes(single, conversation, [text('assistant', 'done')]);
    expect(stored.inserted.map((m) => m.seq)).toEqual([4]);
  });

  it('gives concurrent appends consecutive seqs without gaps or overlaps', async () => {
    const conversation = await newConversation('concurrent');
    const pool = createDb(db.url, { max: 5, name: 'compactd-append-pipeline-pool' });
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          appendAsTheRouteDoes(pool, conversation, [text('user', `question ${i}`), text('assistant', `answer ${i}`)]),
        ),
      );
      for (const [stored] of results) {
        const [first, second] = stored.inserted.map((m) => m.seq);
        expect(second).toBe(first! + 1);
      }
      const tokens = results.reduce((sum, [stored]) => sum + stored.inserted.reduce((s, m) => s + m.tokens, 0), 0);
      const after = await counters(conversation.id);
      expect(after.seqs).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      expect(after).toMatchObject({ messageCount: 60, nextSeq: 61, activeTokens: tokens });
      // the counters' row came back decoded as drizzle decodes it
      const returned = results.map(([stored]) => stored.conversation);
      expect(Math.max(...returned.map((row) => row.nextSeq))).toBe(61);
      expect(returned.every((row) => row.updatedAt instanceof Date && typeof row.policy === 'object')).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('keeps the reported input tokens unless the append reports new ones', async () => {
    const conversation = await newConversation('reported');
    const withReport = prepareAppend(
      { format: 'anthropic', messages: [text('user', 'hi')], usage: { inputTokens: 4_321 } },
      { countTokens, maxMessageBytes: 1_000_000 },
    );
    await single.db.transaction((tx) => storeAppend(tx, conversation, withReport));
    const [stored] = await appendAsTheRouteDoes(single, conversation, [text('assistant', 'hello')]);
    expect(stored.conversation.reportedInputTokens).toBe(4_321);
    const [row] = await db.db.execute<{ reported: number }>(
      sql`select reported_input_tokens as reported from conversations where id = ${conversation.id}`,
    );
    expect(row!.reported).toBe(4_321);
  });
});
