import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

/**
 * CI smoke of the benchmark: `npm run bench -- --quick` starts its own compactd processes and
 * llm-sim, and must report every scenario either with numbers or as "not measured" with a
 * reason — never leave one out.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const outDir = mkdtempSync(path.join(os.tmpdir(), 'compactd-bench-quick-'));
const SCENARIO_IDS = [
  'latency',
  'peers',
  'overhead',
  'throughput',
  'ingest',
  'scale',
  'tokens',
  'scale-out',
  'gateway',
  'inspector',
  'session-cost',
  'native-gateway',
];

let running: ChildProcess | null = null;

afterAll(async () => {
  // a timed-out run is told to stop: on SIGTERM the bench stops its children and drops its database
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running?.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  }
  rmSync(outDir, { recursive: true, force: true });
});

interface Spread {
  n: number;
  median: number;
}
interface Scenario {
  id: string;
  title: string;
  status: 'measured' | 'not measured';
  reason?: string;
  setup: Record<string, unknown>;
  figures: Array<{ label: string; unit: string; stats: Spread }>;
  targets: Array<{ metric: string; threshold: number; value: number; met: boolean; bottleneck?: string }>;
  notes: string[];
}

function runQuickBench(): Promise<{ code: number | null; output: string; seconds: number }> {
  const started = performance.now();
  const tsxCli = path.join(repoRoot, 'node_modules/tsx/dist/cli.mjs');
  // every scenario but the session-cost replay, which bench-session-cost.test.ts runs in the same quick variant
  const only = SCENARIO_IDS.filter((id) => id !== 'session-cost').join(',');
  const child = spawn(process.execPath, [tsxCli, 'bench/run.ts', '--quick', '--only', only, '--out', outDir], {
    cwd: repoRoot,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running = child;
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output, seconds: (performance.now() - started) / 1000 })));
}

describe('npm run bench -- --quick', () => {
  // a few minutes on the shared 2-core machine (the scale-out scenario starts up to four workers and four APIs;
  // the inspector opens pages of a 10,000-message conversation)
  it('reports every scenario with numbers or an explicit reason, and renders the report', { timeout: 480_000 }, async () => {
    const run = await runQuickBench();
    expect(run.code, run.output.slice(-3_000)).toBe(0);

    const jsonFile = readdirSync(outDir).find((f) => f.endsWith('-quick.json'));
    expect(jsonFile, `no results JSON in ${outDir}`).toBeDefined();
    const results = JSON.parse(readFileSync(path.join(outDir, jsonFile as string), 'utf8')) as {
      mode: string;
      machine: { cpus: number };
      scenarios: Scenario[];
    };
    expect(results.mode).toBe('quick');
    expect(results.machine.cpus).toBeGreaterThan(0);
    expect(results.scenarios.map((s) => s.id).sort()).toEqual([...SCENARIO_IDS].sort());

    const sessionCost = results.scenarios.find((s) => s.id === 'session-cost');
    expect(sessionCost?.reason).toContain('not selected');
    for (const scenario of results.scenarios) {
      if (scenario.status === 'not measured') {
        expect(scenario.reason?.trim().length ?? 0, `${scenario.id} is not measured without a reason`).toBeGreaterThan(3);
        continue;
      }
      expect(scenario.status).toBe('measured');
      expect(Object.keys(scenario.setup).length, `${scenario.id} does not say what it measured`).toBeGreaterThan(0);
      expect(scenario.figures.length, `${scenario.id} has no figures`).toBeGreaterThan(0);
      for (const f of scenario.figures) {
        expect(f.stats.n, `${scenario.id}: ${f.label} has no runs`).toBeGreaterThan(0);
        expect(Number.isFinite(f.stats.median), `${scenario.id}: ${f.label} median is ${f.stats.median}`).toBe(true);
      }
      for (const t of scenario.targets) {
        expect(Number.isFinite(t.value), `${scenario.id}: ${t.metric}`).toBe(true);
        // a missed target must name what the profile (or the token breakdown) showed
        if (!t.met) expect(t.bottleneck?.trim().length ?? 0, `${scenario.id}: missed ${t.metric} without a bottleneck`).toBeGreaterThan(20);
      }
    }
    // the peer is the real LangChain middleware: it ran, and above the window its error string was caught
    const peers = results.scenarios.find((s) => s.id === 'peers');
    if (peers?.status === 'measured') {
      const sameSpan = peers.figures.find((f) => f.label.startsWith('compactd wall / LangChain summarizationMiddleware wall, same span'));
      expect(sameSpan?.stats.n ?? 0, 'peers: no LangChain middleware run on the same span').toBeGreaterThan(0);
      expect(peers.notes.join('\n')).toContain('Error generating summary');
    }
    const measuredTargets = results.scenarios.flatMap((s) => s.targets);
    expect(measuredTargets.length).toBeGreaterThanOrEqual(5);

    const markdown = readFileSync(path.join(outDir, (jsonFile as string).replace(/\.json$/, '.md')), 'utf8');
    for (const scenario of results.scenarios) expect(markdown).toContain(scenario.title);
    const svg = readFileSync(path.join(outDir, (jsonFile as string).replace(/\.json$/, '-latency-vs-size.svg')), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('compactd');
  });
});
