import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CliOutcome, main } from '../../../eval/cli.js';
import { databaseUrl, TEST_DATABASE_URL, TEST_REDIS_URL } from '../../../harness/service-urls.js';

/**
 * `npm run eval -- --quick`, the CI variant of the summary fidelity eval: the whole service
 * in-process over real Postgres and Redis, the local summarizer, one Claude Code session
 * against Claude Code's own summary, one mini-swe-agent run, two τ-bench conversations.
 */

const PROVIDER_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'COMPACTD_SUMMARIZER'];

async function evalDatabases(): Promise<number> {
  const sql = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`select count(*)::int as n from pg_database where datname like 'compactd_eval_%'`;
    return (rows[0] as { n: number }).n;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

let outDir: string;
let outcome: CliOutcome;
let databasesBefore: number;
const lines: string[] = [];

beforeAll(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), 'compactd-eval-'));
  databasesBefore = await evalDatabases();
  // never a paid provider in CI: the quick eval is the local summarizer's
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !PROVIDER_VARIABLES.includes(name)));
  const result = await main(
    ['--quick', '--out-dir', outDir],
    { ...env, DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: TEST_REDIS_URL, COMPACTD_EVAL_LANGCHAIN: '0' },
    (line) => lines.push(line),
  );
  if (!result) throw new Error('the eval printed its usage instead of running');
  outcome = result;
}, 150_000);

afterAll(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('npm run eval -- --quick', () => {
  it('runs the quick corpus in under two minutes and cleans up its database', async () => {
    const { results } = outcome;
    expect(results.quick).toBe(true);
    expect(results.provider).toBeNull();
    expect(results.durationMs).toBeLessThan(120_000);
    expect(results.cases.map((c) => c.collection)).toEqual(['claude-code', 'mini-swe-agent', 'tau-bench', 'tau-bench']);
    expect(await evalDatabases()).toBe(databasesBefore);
    expect(lines.some((line) => line.startsWith('cc-8463c716: 2 compactions'))).toBe(true);
  });

  it('compacts every case with reset and auto through the service and measures the result', () => {
    for (const c of outcome.results.cases) {
      const rows = c.rows.filter((r) => r.engine === 'local');
      expect(
        rows.map((r) => r.variant),
        c.id,
      ).toEqual(['reset-local', 'auto-local']);
      for (const row of rows) {
        expect(row.job?.status, `${c.id} ${row.variant}: ${row.job?.reason}`).toBe('completed');
        const m = row.measures!;
        expect(m.tokensBefore).toBe(c.tokensBefore);
        expect(m.tokensAfter).toBeLessThan(m.tokensBefore);
        expect(m.retentionAfterGate.total).toBe(c.identifiers.total);
        // the gate only ever adds identifiers
        expect(m.retentionAfterGate.found).toBeGreaterThanOrEqual(m.retentionBeforeGate.found);
      }
      const reset = rows[0]!.measures!;
      expect(reset.summaryTokens).toBeGreaterThan(0);
      expect(rows[0]!.job!.batches).toBeGreaterThan(0);
    }
  });

  it('sets compactd against Claude Code’s own summary of the same span', () => {
    const session = outcome.results.cases[0]!;
    const peer = session.rows.find((r) => r.engine === 'peer')!.measures!;
    const reset = session.rows.find((r) => r.variant === 'reset-local')!.measures!;
    expect(session.peerPreTokens).toBe(167_731);
    expect(peer.tokensBefore).toBe(session.tokensBefore);
    expect(peer.summaryTokens).toBeGreaterThan(2_000);
    expect(peer.reduction).toBeGreaterThan(0.9);
    expect(reset.reduction).toBeGreaterThanOrEqual(0.7);
    // the continuation goals (SPEC §8): ≥ 95% of the probes, 25 points over Claude Code's own summary
    // (capped at 100%), in a clip-archive no bigger than 1.25× that summary
    expect(reset.probes!.score).toBeGreaterThanOrEqual(0.95);
    expect(reset.probes!.score).toBeGreaterThanOrEqual(Math.min(1, (peer.probes!.score ?? 0) + 0.25));
    expect(reset.summaryTokens).toBeLessThanOrEqual(1.25 * peer.summaryTokens);
    // both are scored on the same continuation probes: the session's span, whole
    expect(reset.probes!.total).toBeGreaterThan(0);
    expect(peer.probes!.spanMessages).toBe(session.messages);
    expect(reset.probes!.answered + reset.probes!.missed.length).toBe(reset.probes!.total);
  });

  it('writes the JSON results and the report', async () => {
    expect(outcome.jsonPath).toBe(path.join(outDir, 'results', `${outcome.results.date.slice(0, 10)}-quick.json`));
    expect(JSON.parse(await readFile(outcome.jsonPath, 'utf8'))).toEqual(JSON.parse(JSON.stringify(outcome.results)));
    const report = await readFile(outcome.reportPath, 'utf8');
    expect(report).toContain('# Summary fidelity eval (quick)');
    expect(report).toContain('No LLM provider was configured');
    expect(report).toContain('## Goal against the results');
    expect(report).toMatch(/\| Claude Code's own summary \(auto compaction\) \| reference \| [\d,]+ \|/);
    expect(report).toContain('### reset · local summarizer');
  });
});
