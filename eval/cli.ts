import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { REPO_ROOT } from './corpus.js';
import { renderReport } from './report.js';
import { type EvalResults, runEval } from './run.js';

/**
 * `npm run eval [-- --quick] [--no-sim] [--out-dir DIR] [--data DIR]`: runs the summary
 * fidelity eval and writes `EVAL.md` and `eval/results/<date>.json`. A quick run (CI)
 * writes `<date>-quick.json` and `EVAL.quick.md` beside it instead, so it never replaces
 * the committed report.
 */

export const USAGE = `usage: npm run eval -- [--quick] [--no-sim] [--out-dir DIR] [--data DIR]

  --quick      one Claude Code session, one mini-swe-agent run, two τ-bench conversations;
               local summarizer, reset and auto only (the CI variant)
  --no-sim     skip the llm-sim (simulator) rows
  --out-dir    where EVAL.md and results/ go (default: the repository: EVAL.md, eval/results/);
               a quick run writes its report beside its JSON, in results/
  --data       the real-transcripts directory (default ../shared/data/real-transcripts)
`;

export interface CliOutcome {
  results: EvalResults;
  reportPath: string;
  jsonPath: string;
}

export function parseCliArgs(argv: string[]): { quick: boolean; sim: boolean; outDir: string | null; dataDir: string | null } | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      'no-sim': { type: 'boolean', default: false },
      'out-dir': { type: 'string' },
      data: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  return {
    quick: values.quick,
    // the simulator adds rows worth having in the full report only
    sim: !values.quick && !values['no-sim'],
    outDir: values['out-dir'] ?? null,
    dataDir: values.data ?? null,
  };
}

async function readAnalysis(): Promise<string | null> {
  try {
    return await readFile(path.join(REPO_ROOT, 'eval/analysis.md'), 'utf8');
  } catch {
    return null;
  }
}

/** Runs the eval for a command line; returns what it wrote (or null for --help). */
export async function main(
  argv: string[],
  env: Record<string, string | undefined>,
  log: (line: string) => void,
): Promise<CliOutcome | null> {
  const args = parseCliArgs(argv);
  if (args === 'help') {
    log(USAGE);
    return null;
  }
  const results = await runEval({ quick: args.quick, sim: args.sim, env, log, ...(args.dataDir ? { dataDir: args.dataDir } : {}) });
  const root = args.outDir ?? REPO_ROOT;
  const resultsDir = args.outDir ? path.join(root, 'results') : path.join(REPO_ROOT, 'eval/results');
  const stamp = results.date.slice(0, 10);
  const jsonPath = path.join(resultsDir, `${stamp}${results.quick ? '-quick' : ''}.json`);
  const reportPath = results.quick ? path.join(resultsDir, 'EVAL.quick.md') : path.join(root, 'EVAL.md');
  await mkdir(resultsDir, { recursive: true });
  await writeFile(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  const analysis = results.quick ? null : await readAnalysis();
  await writeFile(reportPath, renderReport(results, { analysis, resultsFile: path.relative(root, jsonPath) }));
  log(`wrote ${reportPath} and ${jsonPath} (${(results.durationMs / 1000).toFixed(0)} s)`);
  return { results, reportPath, jsonPath };
}
