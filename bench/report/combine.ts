import { readFileSync, writeFileSync } from 'node:fs';

import type { ScenarioResult } from '../lib/result.js';
import type { BenchResults } from './markdown.js';

/**
 * `npx tsx bench/report/combine.ts <base.json> <newer.json>… <out.json>`: the base run's results
 * with every scenario a newer run measured taken from the newest run that measured it (`--only`
 * runs after a change to those sections). The output names each run and the sections it
 * contributed, so the report says so; render it with write-report.ts.
 */
const files = process.argv.slice(2);
const outPath = files.pop();
if (!outPath || files.length < 2) throw new Error('usage: combine.ts <base.json> <newer.json>… <out.json>');
const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchResults);
const base = runs[0]!;
const source = new Map<string, { run: BenchResults; scenario: ScenarioResult }>();
for (const run of runs)
  for (const scenario of run.scenarios) if (run === base || scenario.status !== 'not measured') source.set(scenario.id, { run, scenario });
const order = [...base.scenarios.map((s) => s.id), ...[...source.keys()].filter((id) => !base.scenarios.some((s) => s.id === id))];
const contributed = (run: BenchResults): string[] => order.filter((id) => source.get(id)?.run === run);
const latencyRun = source.get('latency')?.run ?? base;
const combined: BenchResults = {
  ...base,
  durationS: runs.reduce((sum, run) => sum + run.durationS, 0),
  chart: latencyRun.chart,
  scenarios: order.map((id) => source.get(id)!.scenario),
  runs: runs
    .filter((run) => contributed(run).length > 0)
    .map(
      (run) =>
        `${run.mode} run started ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC (${run.durationS} s): ${contributed(run).join(', ')}`,
    ),
};
writeFileSync(outPath, `${JSON.stringify(combined, null, 2)}\n`);
