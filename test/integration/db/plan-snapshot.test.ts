import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { markMetaTurn } from '../../../src/compaction/meta-turns.js';
import { keywordMatchers, scoreUnit } from '../../../src/compaction/plan/score.js';
import { groupUnits } from '../../../src/compaction/plan/units.js';
import { isUserTextMessage } from '../../../src/compaction/render.js';
import { countMessageTokens } from '../../../src/compaction/tokens.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { recordAppend } from '../../../src/db/repos/conversations.js';
import { insertReservedMessages, listActiveMessages } from '../../../src/db/repos/messages.js';
import { loadPlanHistory, loadRewriteCandidates } from '../../../src/db/repos/plan-snapshot.js';
import { toHistoryMessage } from '../../../src/db/repos/snapshot.js';
import { conversations, tenants } from '../../../src/db/schema.js';
import { countTokens } from '../../../src/lib/count-tokens.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { storeRealSession } from '../../helpers/session-rows.js';

/**
 * The plan step reads scoring features computed in SQL instead of the content: on real
 * transcripts they must score every unit as the content does (the length signal up to how
 * jsonb prints a tool input and the tool name a result's marker carries).
 */

let db: TestDatabase;
let conversationId: string;
const policy = mergePolicy({ scoring: { keywords: ['error', 'fail', 'todo', 'must', 'c++', 'read'] } });

beforeAll(async () => {
  db = await createTestDatabase();
  // the whole session, so its meta turns (task notifications, a /compact wrapper, isMeta lines) are in
  conversationId = await storeRealSession(db, 'features', 'spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl');
});
afterAll(async () => {
  await db?.drop();
});

async function fullHistory(): Promise<HistoryMessage[]> {
  const rows = await listActiveMessages(db.db, conversationId);
  return rows.map(toHistoryMessage);
}

describe('plan history from metadata', () => {
  it('holds every message with its tokens and tool links, and no content', async () => {
    const full = await fullHistory();
    const { messages } = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords);
    expect(messages.map((m) => m.seq)).toEqual(full.map((m) => m.seq));
    for (const [i, m] of messages.entries()) {
      const original = full[i]!;
      expect(m).toMatchObject({
        role: original.role,
        kind: original.kind,
        tokens: original.tokens,
        toolUseIds: original.toolUseIds,
        toolResultIds: original.toolResultIds,
        content: [],
      });
      expect(m.features?.userText, `seq ${m.seq}`).toBe(isUserTextMessage(original));
    }
  });

  it('reads the same history page by page, sharing one frozen empty list among its messages', async () => {
    const whole = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords);
    const paged = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords, 7);
    expect(whole.messages.length).toBeGreaterThan(7 * 3);
    expect(paged).toEqual(whole);
    // an empty list per message and field was most of a metadata-only message's memory
    const empties = new Set(
      whole.messages.flatMap((m) => [m.content, m.toolUseIds, m.toolResultIds, m.features?.keywords ?? []]).filter((l) => l.length === 0),
    );
    expect(empties.size).toBe(1);
    expect(Object.isFrozen([...empties][0])).toBe(true);
  });

  it('scores every unit as its content does', async () => {
    const full = await fullHistory();
    const { messages } = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords);
    const fromContent = groupUnits(full);
    const fromFeatures = groupUnits(messages);
    expect(fromFeatures.map((u) => u.seqs)).toEqual(fromContent.map((u) => u.seqs));
    const matchers = keywordMatchers(policy.scoring.keywords);
    let keywordHits = 0;
    for (const [i, unit] of fromFeatures.entries()) {
      const expected = scoreUnit(fromContent[i]!, 0, policy.scoring, matchers);
      const actual = scoreUnit(unit, 0, policy.scoring, matchers);
      const { length, total: _t, ...signals } = actual;
      const { length: expectedLength, total: _e, ...expectedSignals } = expected;
      expect(signals, `unit of seqs ${unit.seqs.join(',')}`).toEqual(expectedSignals);
      expect(Math.abs(length - expectedLength), `unit of seqs ${unit.seqs.join(',')}`).toBeLessThan(0.5);
      keywordHits += expected.keywords;
    }
    expect(keywordHits).toBeGreaterThan(0);
  });

  it('matches each keyword on its own behind the any-keyword test: one keyword, none, and an empty list', async () => {
    const all = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords);
    for (const [i, keyword] of policy.scoring.keywords.entries()) {
      const { messages } = await loadPlanHistory(db.db, conversationId, [keyword]);
      expect(
        messages.map((m) => m.features?.keywords),
        keyword,
      ).toEqual(all.messages.map((m) => (m.features?.keywords.includes(i) ? [0] : [])));
    }
    const none = await loadPlanHistory(db.db, conversationId, ['zz-no-such-word-zz']);
    expect(none.messages.every((m) => m.features?.keywords.length === 0)).toBe(true);
    const empty = await loadPlanHistory(db.db, conversationId, []);
    expect(empty.messages.every((m) => m.features?.keywords.length === 0)).toBe(true);
  });

  it('names the newest request, and reads content only for tool outputs Tier 1/2 may rewrite and their calls', async () => {
    const full = await fullHistory();
    const { latestRequestSeq } = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords);
    const requests = full.filter(
      (m) =>
        isUserTextMessage(m) &&
        !/^\s*<(returncode|output)\b/.test(m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')),
    );
    expect(latestRequestSeq).toBe(requests.at(-1)?.seq ?? null);
    // the session's meta turns are never the request, and the plan history says which they are
    const { messages } = await loadPlanHistory(db.db, conversationId, policy.scoring.keywords);
    const metaSeqs = full.filter((m) => m.meta === true).map((m) => m.seq);
    expect(metaSeqs.length).toBeGreaterThan(0);
    expect(messages.filter((m) => m.meta === true).map((m) => m.seq)).toEqual(metaSeqs);
    expect(metaSeqs).not.toContain(latestRequestSeq);

    const candidates = await loadRewriteCandidates(db.db, conversationId, 500);
    const large = full.filter((m) => m.toolResultIds.length > 0 && m.tokens >= 500);
    expect(large.length).toBeGreaterThan(0);
    for (const m of large) expect(candidates.get(m.seq)).toEqual(m.content);
    const calls = new Set(large.flatMap((m) => m.toolResultIds));
    const expected = new Set([
      ...large.map((m) => m.seq),
      ...full.filter((m) => m.toolUseIds.some((id) => calls.has(id))).map((m) => m.seq),
    ]);
    expect(new Set(candidates.keys())).toEqual(expected);
    expect(candidates.size).toBeLessThan(full.length);
  });
});

describe('meta turns in the plan history', () => {
  it('are neither the latest request nor user text, and carry meta: true', async () => {
    const [tenant] = await db.db.insert(tenants).values({ name: 'meta-turns' }).returning();
    const [conversation] = await db.db
      .insert(conversations)
      .values({ tenantId: tenant!.id, externalId: 'meta-turns', contextLimit: 200_000 })
      .returning();
    const texts = [
      ['user', 'Fix the flaky login test, and never touch the public API.'],
      ['assistant', 'On it.'],
      [
        'user',
        '<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>\nRead the output file to retrieve the result: /tmp/b1.output',
      ],
      ['user', '<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>'],
      ['user', '<local-command-stdout>Reconnected to tidewave.</local-command-stdout>'],
    ] as const;
    // flagged as the append API flags them
    const rows = texts.map(([role, text]) => {
      const message = markMetaTurn({ role, content: [{ type: 'text' as const, text }] });
      return { ...message, tokens: countMessageTokens(message, countTokens), toolUseIds: [], toolResultIds: [] };
    });
    await recordAppend(db.db, { id: conversation!.id, addedMessages: rows.length, addedTokens: 0, reportedInputTokens: undefined });
    await insertReservedMessages(db.db, conversation!.id, rows);
    const { messages, latestRequestSeq } = await loadPlanHistory(db.db, conversation!.id, policy.scoring.keywords);
    expect(latestRequestSeq).toBe(1);
    expect(messages.map((m) => [m.seq, m.meta === true, m.features?.userText])).toEqual([
      [1, false, true],
      [2, false, false],
      [3, true, false],
      [4, true, false],
      [5, true, false],
    ]);
  });
});
