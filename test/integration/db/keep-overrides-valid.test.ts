import { readFileSync } from 'node:fs';
import path from 'node:path';

import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../../../harness/repo-root.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { conversations, tenants } from '../../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * Migration 0016: overrides stored under the old defaults (trigger 0.8) that the new ones
 * (trigger 0.7) would make invalid get the trigger they were written against; any other
 * override is left as it is.
 */

let db: TestDatabase;
const MIGRATION = readFileSync(path.join(REPO_ROOT, 'migrations/0016_keep_overrides_valid.sql'), 'utf8');

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function tenantWith(name: string, policy: Record<string, unknown>) {
  const [tenant] = await db.db.insert(tenants).values({ name, policy }).returning();
  return tenant!;
}

async function conversationWith(tenantId: string, externalId: string, policy: Record<string, unknown>) {
  const [row] = await db.db.insert(conversations).values({ tenantId, externalId, contextLimit: 100_000, policy }).returning();
  return row!;
}

describe('migration 0016', () => {
  it('pins the old trigger on overrides the new defaults would refuse, and only on those', async () => {
    const warnOnly = await tenantWith('warn-only', { warnRatio: 0.75 });
    const ownTrigger = await tenantWith('own-trigger', { triggerRatio: 0.9, warnRatio: 0.85 });
    const plain = await tenantWith('plain', { keepRecent: 20 });
    const targetHigh = await conversationWith(plain.id, 'target-high', { targetRatio: 0.7 });
    const targetLow = await conversationWith(plain.id, 'target-low', { targetRatio: 0.3 });
    const underOwnTrigger = await conversationWith(ownTrigger.id, 'under-own-trigger', { warnRatio: 0.8 });
    // before: the new defaults refuse them
    expect(() => mergePolicy(warnOnly.policy)).toThrow();
    expect(() => mergePolicy(plain.policy, targetHigh.policy)).toThrow();

    for (const statement of MIGRATION.split('--> statement-breakpoint')) await db.db.execute(sql.raw(statement));

    const tenant = async (id: string) => (await db.db.select().from(tenants).where(eq(tenants.id, id)))[0]!.policy;
    const conversation = async (id: string) => (await db.db.select().from(conversations).where(eq(conversations.id, id)))[0]!.policy;
    expect(await tenant(warnOnly.id)).toEqual({ warnRatio: 0.75, triggerRatio: 0.8 });
    expect(await tenant(ownTrigger.id)).toEqual({ triggerRatio: 0.9, warnRatio: 0.85 });
    expect(await tenant(plain.id)).toEqual({ keepRecent: 20 });
    expect(await conversation(targetHigh.id)).toEqual({ targetRatio: 0.7, triggerRatio: 0.8 });
    expect(await conversation(targetLow.id)).toEqual({ targetRatio: 0.3 });
    expect(await conversation(underOwnTrigger.id)).toEqual({ warnRatio: 0.8 });
    // after: every one of them merges
    expect(mergePolicy(await tenant(warnOnly.id)).triggerRatio).toBe(0.8);
    expect(mergePolicy(await tenant(plain.id), await conversation(targetHigh.id)).triggerRatio).toBe(0.8);
    expect(mergePolicy(await tenant(ownTrigger.id), await conversation(underOwnTrigger.id)).triggerRatio).toBe(0.9);
  });
});
