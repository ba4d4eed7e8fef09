import { type CompactdProcess, spawnCompactd } from '../../harness/compactd-process.js';
import { startTestLlmSim, type TestLlmSim } from '../../harness/llm-sim.js';
import { createStack, type Stack } from './stack.js';

/**
 * An API in-process with no workers of its own, an llm-sim, and `compactd worker` child
 * processes pointed at both through the Anthropic adapter: the setup of every test that
 * kills workers. `env` applies to the API and every worker; `startWorker(env)` adds to it
 * for one worker.
 */
export interface WorkerFleet {
  stack: Stack;
  sim: TestLlmSim;
  startWorker(env?: Record<string, string>): CompactdProcess;
  close(): Promise<void>;
}

export async function createWorkerFleet(
  simOptions: Parameters<typeof startTestLlmSim>[0] = {},
  options: { env?: Record<string, string> } = {},
): Promise<WorkerFleet> {
  const sim = await startTestLlmSim(simOptions);
  const stack = await createStack({ workers: false, ...(options.env ? { env: options.env } : {}) });
  const workers: CompactdProcess[] = [];
  return {
    stack,
    sim,
    startWorker(env = {}) {
      const worker = spawnCompactd('worker', {
        ...stack.env,
        ANTHROPIC_BASE_URL: sim.url,
        COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5',
        ...env,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.kill('SIGKILL')));
      await stack.close();
      await sim.close();
    },
  };
}
