import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { syncHistory } from '../../../src/api/gateway/store.js';
import { apiDepsFrom } from '../../../src/app/start-api.js';
import { createDb, type DbHandle } from '../../../src/db/client.js';
import { type ConversationRow, getConversation } from '../../../src/db/repos/conversations.js';
import { conversations, tenants } from '../../../src/db/schema.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * The gateway stores a request's new turns under the conversation lock. The lock, the
 * conversation's row and the automatic trigger's read leave together, one pipeline: sent
 * before the lock is granted, run by Postgres once it is, so the row and the trigger's policy
 * are the ones the lock protects (a policy changed by the session that held the lock counts).
 */

let stack: Stack;
/** one connection, so the statements prepared by the warm-up are the ones the test runs */
let single: DbHandle;
let sent: string[] = [];
let tenantId: string;

beforeAll(async () => {
  stack = await createStack({ workers: false, env: { COMPACTD_SUMMARIZER: 'local' } });
  single = createDb(stack.db.url, { max: 1, name: 'compactd-gateway-sync', onQuery: (query) => sent.push(query) });
  const [tenant] = await stack.db.db.select({ id: tenants.id }).from(tenants);
  tenantId = tenant!.id;
});
afterAll(async () => {
  await single?.close();
  await stack?.close();
});

const turn = (position: number) => ({
  role: position % 2 === 0 ? 'user' : 'assistant',
  content: `Turn ${position}: ${'the build fails in src/cache/index.ts; '.repeat(40)}`,
});
/** the client's history of `length` turns, keyed as the gateway keys them (any distinct strings do here) */
const history = (length: number) => ({
  keys: Array.from({ length }, (_, position) => `key-${position}`),
  storable: (position: number) => turn(position),
});
const sync = (conversation: ConversationRow, length: number) =>
  syncHistory({ ...apiDepsFrom(stack.deps), db: single.db }, conversation, 'anthropic', history(length), 'rewinds');

const kindOf = (query: string) =>
  /pg_advisory_xact_lock/.test(query)
    ? 'lock'
    : /active_job/.test(query)
      ? 'trigger'
      : /^\s*select/.test(query) && /from "conversations"/.test(query)
        ? 'conversation'
        : query.trim().split(/\s+/)[0]!.toLowerCase();

describe("the gateway's store under the conversation lock", () => {
  it('sends the lock, the row and the trigger read together, and reads the policy the lock holder left', async () => {
    await stack.db.db.insert(conversations).values({ tenantId, externalId: 'gw-pipeline', contextLimit: 4_000, policy: { auto: false } });
    const conversation = (await getConversation(stack.db.db, tenantId, 'gw-pipeline'))!;
    // the connection prepares its statements once (described first, so not yet pipelined)
    const warm = await sync(conversation, 2);
    expect(warm).toMatchObject({ kind: 'stored', compaction: null });

    const holder = await stack.db.sql.reserve();
    let held = false;
    try {
      await holder`begin`;
      held = true;
      await holder`select pg_advisory_xact_lock(hashtextextended(${conversation.id}, 0))`;
      // the lock holder turns automatic compaction on, low enough that the next append triggers it
      await holder`update conversations set policy = ${JSON.stringify({ triggerRatio: 0.3, warnRatio: 0.2, targetRatio: 0.1, minMessages: 2, keepRecent: 1 })}::jsonb where id = ${conversation.id}`;
      sent = [];
      const stored = sync(warm.conversation, 6);
      await expect
        .poll(
          async () =>
            (
              await stack.db
                .sql`select count(*)::int as n from pg_stat_activity where application_name = 'compactd-gateway-sync' and wait_event_type = 'Lock'`
            )[0]!['n'],
          { timeout: 5_000 },
        )
        .toBe(1);
      expect(sent.map(kindOf)).toEqual(['begin', 'lock', 'conversation', 'trigger']);
      await holder`commit`;
      held = false;
      const outcome = await stored;
      // stored, and the compaction started under the policy the holder committed (the row passed in said auto: false)
      expect(outcome.kind).toBe('stored');
      expect(outcome.kind === 'stored' ? outcome.compaction : null).toMatchObject({ status: 'queued' });
    } finally {
      if (held) await holder`rollback`;
      holder.release();
    }
    const [row] = await stack.db.db.select().from(conversations).where(eq(conversations.id, conversation.id));
    expect(row!.messageCount).toBe(6);
  });
});
