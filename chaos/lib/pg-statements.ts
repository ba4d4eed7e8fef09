import postgres from 'postgres';

import type { ChaosStack } from './stack.js';

/**
 * Statements Postgres executes, counted by pg_stat_statements on the stack's private cluster:
 * the extension is preloaded (ALTER SYSTEM, then a restart, before any compactd process
 * connects) and read from a connection of its own, whose reads are left out of the count.
 * Unlike pg_stat_database's xact_commit, which a backend reports when it has been idle for up
 * to 10 s, pg_stat_statements counts each statement as it ends, so a 10-s window is exact.
 * Utility statements (BEGIN, COMMIT, LISTEN) count too.
 */

export interface StatementCounter {
  /** statements executed in the database so far (the counter's own reads excluded) */
  total(): Promise<number>;
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Preloads pg_stat_statements on the stack's cluster (restarting it) and returns a counter. Call before any compactd process starts. */
export async function countStatements(stack: ChaosStack): Promise<StatementCounter> {
  await stack.db.sql.unsafe(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
  await stack.pg.restart('fast');
  const sql = postgres(stack.databaseUrl, {
    max: 1,
    onnotice: () => undefined,
    connection: { application_name: 'chaos-statement-counter' },
  });
  // the harness's own pool lost its connections in the restart: one failed query each at most
  for (let attempt = 0; ; attempt += 1) {
    try {
      await stack.db.sql`select 1`;
      break;
    } catch (error) {
      if (attempt >= 20) throw error;
      await pause(250);
    }
  }
  await sql.unsafe('create extension if not exists pg_stat_statements');
  return {
    async total() {
      const [row] = await sql<Array<{ n: string }>>`
        select coalesce(sum(calls), 0)::bigint as n
          from pg_stat_statements
         where dbid = (select oid from pg_database where datname = current_database())
           and query not ilike '%pg_stat_statements%'`;
      return Number(row?.n ?? 0);
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

/** Statements per second over `ms` from now. */
export async function statementRate(counter: StatementCounter, ms: number): Promise<{ statements: number; perSecond: number }> {
  const before = await counter.total();
  const started = performance.now();
  await pause(ms);
  const statements = (await counter.total()) - before;
  return { statements, perSecond: statements / ((performance.now() - started) / 1000) };
}
