import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { REPO_ROOT as repoRoot } from '../harness/index.js';
import { type BenchContext, type ChartPoint, makeUniqueId } from './lib/context.js';
import { emptyScenario, type ScenarioResult } from './lib/result.js';
import { startServices } from './lib/services.js';
import type { BenchResults } from './report/markdown.js';
import { writeReport } from './report/write-report.js';
import { SCENARIOS } from './scenarios/index.js';

/**
 * `npm run bench [-- --quick] [--only id,id] [--out DIR] [--sessions id,id] [--arms key,key]
 * [--policy JSON]`: starts compactd (api + worker
 * children) over a bench database and llm-sim, runs every scenario, writes
 * bench/results/<date>.json and regenerates BENCH.md with its chart. A scenario that throws
 * is reported "not measured" with the error; none is skipped silently. `--sessions` (id
 * prefixes), `--arms` and `--policy` (merged into the compactd arms' conversation policy)
 * narrow the session-cost scenario, to tune on some sessions and report on the others.
 */

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    sessions: { type: 'string' },
    arms: { type: 'string' },
    policy: { type: 'string' },
  },
});
const quick = values.quick === true;
const only = values.only?.split(',').map((s) => s.trim()) ?? null;
const list = (value: string | undefined) => value?.split(',').map((s) => s.trim());
const scenarioOptions = {
  sessions: list(values.sessions),
  arms: list(values.arms),
  policy: values.policy ? parsePolicy(values.policy) : undefined,
};
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const outDir = values.out ? path.resolve(values.out) : null;
const resultsDir = outDir ?? path.join(repoRoot, 'bench/results');
const profileDir = path.join(os.tmpdir(), `compactd-bench-prof-${stamp}`);
mkdirSync(resultsDir, { recursive: true });
mkdirSync(profileDir, { recursive: true });

const started = performance.now();
const log = (message: string) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
log(`mode ${quick ? 'quick' : 'full'}; starting services`);
const svc = await startServices();
const chart: ChartPoint[] = [];
const ctx: BenchContext = {
  svc,
  quick,
  profileDir,
  chart,
  log,
  uniqueId: makeUniqueId(stamp.replace(/-/g, '').slice(2, 14)),
  only,
  scenarioOptions,
};
const scenarios: ScenarioResult[] = [];
// Interrupted: stop the children and drop the bench database before leaving.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the service processes`);
    void svc.close().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}
try {
  for (const scenario of SCENARIOS) {
    if (only && !scenario.ids.some((id) => only.includes(id))) {
      // left out on request, and said so in the report
      for (const [i, id] of scenario.ids.entries()) {
        const skipped = emptyScenario(id, scenario.titles[i] ?? id);
        skipped.status = 'not measured';
        skipped.reason = `not selected in this run (--only ${only.join(',')})`;
        scenarios.push(skipped);
      }
      continue;
    }
    const t0 = performance.now();
    try {
      scenarios.push(...(await scenario.run(ctx)));
    } catch (error) {
      log(`scenario ${scenario.ids.join('+')} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      for (const [i, id] of scenario.ids.entries()) {
        const failed = emptyScenario(id, scenario.titles[i] ?? id);
        failed.status = 'not measured';
        failed.reason = `the scenario failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1_000);
        failed.durationMs = performance.now() - t0;
        scenarios.push(failed);
      }
      // a failed scenario may leave a job running: the next one starts a fresh worker
      await svc.stopWorker();
    }
  }
} finally {
  await svc.close();
}

const results: BenchResults = {
  version: 1,
  mode: quick ? 'quick' : 'full',
  startedAt: new Date(Date.now() - (performance.now() - started)).toISOString(),
  durationS: Math.round((performance.now() - started) / 1000),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  },
  chart,
  scenarios,
};
const base = `${stamp.slice(0, 10)}${quick ? '-quick' : ''}`;
const jsonPath = path.join(resultsDir, `${base}.json`);
writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
log(`results: ${jsonPath}`);
const reportPaths =
  quick || outDir
    ? {
        markdown: path.join(resultsDir, `${base}.md`),
        svg: path.join(resultsDir, `${base}-latency-vs-size.svg`),
        svgLink: `${base}-latency-vs-size.svg`,
      }
    : {
        markdown: path.join(repoRoot, 'BENCH.md'),
        svg: path.join(repoRoot, 'bench/latency-vs-size.svg'),
        svgLink: 'bench/latency-vs-size.svg',
      };
writeReport(results, {
  ...reportPaths,
  jsonLink: path.relative(path.dirname(reportPaths.markdown), jsonPath),
  findings: path.join(repoRoot, 'bench/findings.md'),
});
log(`report: ${reportPaths.markdown}`);

function parsePolicy(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('--policy must be a JSON object');
  return parsed as Record<string, unknown>;
}
