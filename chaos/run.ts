import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { REPO_ROOT } from '../harness/index.js';
import { renderReliability, type RunResult } from './lib/report.js';
import { missedTargets, type ScenarioResult } from './lib/result.js';
import { ABUSE_FULL, ABUSE_QUICK, runAbuse } from './scenarios/abuse/index.js';
import { runAuthMatrix } from './scenarios/auth-matrix.js';
import { DUPLICATE_STORM_FULL, DUPLICATE_STORM_QUICK, runDuplicateStorm } from './scenarios/duplicate-storm.js';
import { FUZZ_FULL, FUZZ_QUICK, runFuzz } from './scenarios/fuzz.js';
import { GATEWAY_FULL, GATEWAY_QUICK, runGateway } from './scenarios/gateway.js';
import { LLM_FAULTS_FULL, LLM_FAULTS_QUICK, runLlmFaults } from './scenarios/llm-faults.js';
import { LOAD_FULL, LOAD_QUICK, runLoad } from './scenarios/load.js';
import { runPromptInjection } from './scenarios/prompt-injection.js';
import { runServiceRestarts, SERVICE_RESTARTS_FULL, SERVICE_RESTARTS_QUICK } from './scenarios/service-restarts.js';
import { runTenantFairness, TENANT_FAIRNESS_FULL, TENANT_FAIRNESS_QUICK } from './scenarios/tenant-fairness.js';
import { runWorkerCrashes, WORKER_CRASHES_FULL, WORKER_CRASHES_QUICK } from './scenarios/worker-crashes.js';

/**
 * `npm run chaos [-- --only a,b] [--quick] [--render]`: runs the suites one after another (full
 * variants by default), writes chaos/results/<date>.json and renders RELIABILITY.md.
 * Results of suites not run this time are carried over from the latest results file,
 * each with the commit it was measured on. Exits 1 when a target was missed.
 */

type Runner = (quick: boolean, logDir: string) => Promise<ScenarioResult>;

const SUITES: Record<string, Runner> = {
  'worker-crashes': (q, logDir) => runWorkerCrashes({ ...(q ? WORKER_CRASHES_QUICK : WORKER_CRASHES_FULL), logDir }),
  'service-restarts': (q, logDir) => runServiceRestarts({ ...(q ? SERVICE_RESTARTS_QUICK : SERVICE_RESTARTS_FULL), logDir }),
  'llm-faults': (q, logDir) => runLlmFaults({ ...(q ? LLM_FAULTS_QUICK : LLM_FAULTS_FULL), logDir }),
  'duplicate-storm': (q, logDir) => runDuplicateStorm({ ...(q ? DUPLICATE_STORM_QUICK : DUPLICATE_STORM_FULL), logDir }),
  fuzz: (q, logDir) => runFuzz({ ...(q ? FUZZ_QUICK : FUZZ_FULL), logDir }),
  'auth-matrix': (q, logDir) => runAuthMatrix(q ? 'quick' : 'full', logDir),
  'prompt-injection': (q, logDir) => runPromptInjection(q ? 'quick' : 'full', logDir),
  load: (q, logDir) => runLoad({ ...(q ? LOAD_QUICK : LOAD_FULL), logDir }),
  'tenant-fairness': (q, logDir) => runTenantFairness({ ...(q ? TENANT_FAIRNESS_QUICK : TENANT_FAIRNESS_FULL), logDir }),
  abuse: (q, logDir) => runAbuse({ ...(q ? ABUSE_QUICK : ABUSE_FULL), logDir }),
  gateway: (q, logDir) => runGateway({ ...(q ? GATEWAY_QUICK : GATEWAY_FULL), logDir }),
};

const RESULTS_DIR = path.join(REPO_ROOT, 'chaos/results');

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
}

/** The commit under test, marked when src/ differs from it (the figures then belong to the work tree). */
function commitUnderTest(): string {
  const head = git(['rev-parse', '--short', 'HEAD']);
  return git(['status', '--porcelain', '--', 'src', 'migrations', 'package.json']) === '' ? head : `${head}+dirty`;
}

function latestResults(): RunResult[] {
  if (!existsSync(RESULTS_DIR)) return [];
  const files = readdirSync(RESULTS_DIR)
    .filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f))
    .sort();
  const last = files.at(-1);
  return last ? (JSON.parse(readFileSync(path.join(RESULTS_DIR, last), 'utf8')) as { results: RunResult[] }).results : [];
}

function serviceVersions(): string {
  const pg = execFileSync('/usr/lib/postgresql/15/bin/postgres', ['--version'], { encoding: 'utf8' }).trim();
  const redis = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  return `${pg}, ${redis} (private instances)`;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { only: { type: 'string' }, quick: { type: 'boolean', default: false }, render: { type: 'boolean', default: false } },
  });
  // --render: RELIABILITY.md again from the latest results file, running nothing.
  const names = values.render ? [] : values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(SUITES);
  const unknown = names.filter((n) => !SUITES[n]);
  if (unknown.length > 0) throw new Error(`unknown suite(s) ${unknown.join(', ')}; known: ${Object.keys(SUITES).join(', ')}`);
  const logDir = names.length > 0 ? mkdtempSync(path.join(tmpdir(), 'compactd-chaos-')) : '';
  if (names.length > 0)
    process.stdout.write(`chaos: ${names.join(', ')} (${values.quick ? 'quick' : 'full'}); process logs in ${logDir}\n`);

  const fresh: RunResult[] = [];
  for (const name of names) {
    const commit = commitUnderTest();
    const started = Date.now();
    process.stdout.write(`chaos: ${name} …\n`);
    const result = await (SUITES[name] as Runner)(values.quick ?? false, logDir);
    fresh.push({ ...result, commit });
    const missed = missedTargets(result);
    process.stdout.write(
      `chaos: ${name} done in ${Math.round((Date.now() - started) / 1000)} s: ${missed.length === 0 ? 'all targets met' : missed.join('; ')}\n`,
    );
  }

  const merged = [...latestResults().filter((r) => !names.includes(r.id)), ...fresh];
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${new Date().toISOString().slice(0, 10)}.json`);
  const meta = {
    machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: `Node ${process.version}`,
    services: serviceVersions(),
  };
  writeFileSync(file, `${JSON.stringify({ meta, results: merged }, null, 2)}\n`);
  writeFileSync(path.join(REPO_ROOT, 'RELIABILITY.md'), renderReliability(merged, meta, path.relative(REPO_ROOT, file)));
  const missed = merged.flatMap(missedTargets);
  process.stdout.write(
    `chaos: wrote ${path.relative(REPO_ROOT, file)} and RELIABILITY.md; ${missed.length === 0 ? 'every target met' : `${missed.length} target(s) missed`}\n`,
  );
  return missed.length === 0 ? 0 : 1;
}

// An interrupted run exits through process.exit, so the private services and children are cleaned up.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
