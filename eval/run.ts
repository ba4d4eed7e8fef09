import { execFileSync } from 'node:child_process';

import { createScratchDatabase, type InProcessStack as EvalStack, runningServiceUrls, startInProcessStack } from '../harness/index.js';
import { type LlmSim, startLlmSim } from '../src/llm-sim/server.js';
import { type EvalCase, loadCorpus, REPO_ROOT } from './corpus.js';
import { type ImagesReport, runImagesCheck } from './images.js';
import { langchainEnabled } from './langchain.js';
import { type CaseReport, runCase } from './run-case.js';
import { type ProviderChoice, providerFromEnv, SIM_LOSS_RATE, variantsFor } from './variants.js';

/** One eval run: the corpus, the stacks it needs, every case, the results as data. */

export interface EvalOptions {
  quick: boolean;
  /** also run llm-sim (a simulator) on the Claude Code sessions */
  sim: boolean;
  env: Record<string, string | undefined>;
  dataDir?: string;
  /** progress lines (stderr in the CLI) */
  log?: (line: string) => void;
}

export interface EvalResults {
  version: 1;
  date: string;
  commit: string | null;
  quick: boolean;
  provider: ProviderChoice | null;
  sim: { lossRate: number } | null;
  /** the LangChain middleware peer ran (on llm-sim with this loss rate) */
  langchain: { lossRate: number } | null;
  durationMs: number;
  cases: CaseReport[];
  /** the images check (eval/images.ts); absent from results written before it existed */
  images?: ImagesReport;
}

const IMAGES_TIMEOUT_MS = 120_000;
const PROVIDER_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'];

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** The simulator's stack sees only the simulator: real provider variables are removed from its environment. */
function simEnv(env: Record<string, string | undefined>, sim: LlmSim): Record<string, string | undefined> {
  const out = Object.fromEntries(
    Object.entries(env).filter(([name]) => !PROVIDER_VARIABLES.includes(name) && name !== 'COMPACTD_SUMMARIZER'),
  );
  return { ...out, OPENAI_BASE_URL: `${sim.url}/v1` };
}

/**
 * The whole service in-process (harness/in-process-stack.ts), as `compactd start` wires it,
 * over a fresh migrated database of the eval's own (dropped afterwards) and a queue prefix of
 * its own. Nothing is mocked: the eval measures what the service does.
 */
async function createEvalStack(env: Record<string, string | undefined>): Promise<EvalStack> {
  const { databaseUrl: serverUrl, redisUrl } = runningServiceUrls(env);
  const database = await createScratchDatabase({ serverUrl, namePrefix: 'compactd_eval_' });
  // DATABASE_URL names the server only: the stack's database replaces it
  return startInProcessStack({ database, redisUrl, env: { ...env, DATABASE_URL: undefined }, tenantName: 'eval', prefixTag: 'eval' });
}

export async function runEval(options: EvalOptions): Promise<EvalResults> {
  const log = options.log ?? (() => {});
  const started = Date.now();
  const cases: EvalCase[] = loadCorpus({ quick: options.quick, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const provider = providerFromEnv(options.env);
  const langchain = langchainEnabled(options.env, options.quick);
  const stacks: EvalStack[] = [];
  let sim: LlmSim | null = null;
  try {
    const main = await createEvalStack(options.env);
    stacks.push(main);
    let simStack: EvalStack | null = null;
    if (options.sim || langchain) sim = await startLlmSim({ host: '127.0.0.1', port: 0, lossRate: SIM_LOSS_RATE, seed: 1 });
    if (options.sim && sim) {
      simStack = await createEvalStack(simEnv(options.env, sim));
      stacks.push(simStack);
    }
    const reports: CaseReport[] = [];
    for (const c of cases) {
      const variants = variantsFor(c, { quick: options.quick, provider, sim: options.sim });
      const t0 = Date.now();
      reports.push(await runCase(c, variants, { main, sim: simStack, langchain: langchain ? sim : null }));
      log(`${c.id}: ${variants.length} compactions in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    const images = await runImagesCheck(main, IMAGES_TIMEOUT_MS);
    log(`images: ${images.recallable}/${images.archived} archived images found by reference`);
    return {
      images,
      version: 1,
      date: new Date().toISOString(),
      commit: gitCommit(),
      quick: options.quick,
      provider,
      sim: options.sim ? { lossRate: SIM_LOSS_RATE } : null,
      langchain: langchain ? { lossRate: SIM_LOSS_RATE } : null,
      durationMs: Date.now() - started,
      cases: reports,
    };
  } finally {
    for (const stack of stacks.reverse()) await stack.close();
    await sim?.close();
  }
}
