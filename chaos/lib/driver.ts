import { randomUUID } from 'node:crypto';

import { sql } from 'drizzle-orm';

import type { Db } from '../../src/db/client.js';
import type { Http } from './http.js';

/**
 * Keeps `concurrent` compactions running until one has been requested for every
 * conversation, then until all are terminal (or the deadline). Requests carry an
 * Idempotency-Key and are retried with it while a service restarts, so each conversation
 * gets exactly one compaction request however many attempts it took.
 */

export interface DriveOptions {
  db: Db;
  http: Http;
  conversationIds: readonly string[];
  concurrent: number;
  body: Record<string, unknown>;
  deadline: number;
  /** called after the n-th compaction (1-based) was accepted */
  onRequested?(n: number): void;
}

export interface DriveState {
  requested: number;
  /** job id → conversation id of every accepted request */
  jobs: Map<string, string>;
  /** job ids not terminal yet (as last seen) */
  running: Set<string>;
  /** attempts that failed (5xx, network) and were retried */
  retries: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function requestCompaction(
  http: Http,
  conversationId: string,
  body: Record<string, unknown>,
  deadline: number,
): Promise<{ id: string; retries: number }> {
  const key = randomUUID();
  for (let retries = 0; ; retries++) {
    try {
      const res = await http.request('POST', `/v1/conversations/${conversationId}/compactions`, {
        body,
        headers: { 'idempotency-key': key },
      });
      if (res.status === 200 || res.status === 202) return { id: res.json<{ id: string }>().id, retries };
      if (res.status < 500 && res.status !== 409)
        throw new Error(`compaction of ${conversationId}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('compaction of')) throw error;
    }
    if (Date.now() > deadline) throw new Error(`compaction of ${conversationId} not accepted before the deadline`);
    await pause(250);
  }
}

async function terminalOf(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  try {
    const rows = await db.execute<{ id: string }>(
      sql`select id from compaction_jobs where id = any(${sql.param([...ids])}::uuid[]) and status in ('completed','noop','failed','cancelled')`,
    );
    return rows.map((r) => r.id);
  } catch {
    return []; // the database is restarting: ask again on the next round
  }
}

/** Starts driving; `state` is live (the appender reads `running`), `done` settles at the end. */
export function startDrive(options: DriveOptions): { state: DriveState; done: Promise<void>; runningConversations(): string[] } {
  const state: DriveState = { requested: 0, jobs: new Map(), running: new Set(), retries: 0 };
  const done = (async () => {
    while ((state.requested < options.conversationIds.length || state.running.size > 0) && Date.now() < options.deadline) {
      for (const id of await terminalOf(options.db, [...state.running])) state.running.delete(id);
      while (state.running.size < options.concurrent && state.requested < options.conversationIds.length) {
        const conversationId = options.conversationIds[state.requested] as string;
        const job = await requestCompaction(options.http, conversationId, options.body, options.deadline);
        state.retries += job.retries;
        state.jobs.set(job.id, conversationId);
        state.running.add(job.id);
        state.requested += 1;
        options.onRequested?.(state.requested);
      }
      await pause(200);
    }
  })();
  return { state, done, runningConversations: () => [...state.running].map((id) => state.jobs.get(id) as string) };
}
