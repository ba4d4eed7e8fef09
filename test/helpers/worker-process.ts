import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startTestLlmSim, type TestLlmSim } from './llm-sim.js';
import { createStack, type Stack } from './stack.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** resolves with the exit code (or signal name) */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/** `compactd worker` as a real child process (so tests can SIGKILL it). */
export function startWorkerProcess(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/compactd.mjs'), 'worker'], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', LOG_PRETTY: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return { child, output: () => output, exited, kill: (signal = 'SIGKILL') => void child.kill(signal) };
}

/**
 * An API in-process with no workers of its own, an llm-sim, and worker child processes
 * pointed at both through the Anthropic adapter: the setup of every test that kills workers.
 * `env` applies to the API and every worker; `startWorker(env)` adds to it for one worker.
 */
export interface WorkerFleet {
  stack: Stack;
  sim: TestLlmSim;
  startWorker(env?: Record<string, string>): WorkerProcess;
  close(): Promise<void>;
}

export async function createWorkerFleet(
  simOptions: Parameters<typeof startTestLlmSim>[0] = {},
  options: { env?: Record<string, string> } = {},
): Promise<WorkerFleet> {
  const sim = await startTestLlmSim(simOptions);
  const stack = await createStack({ workers: false, ...(options.env ? { env: options.env } : {}) });
  const workers: WorkerProcess[] = [];
  return {
    stack,
    sim,
    startWorker(env = {}) {
      const worker = startWorkerProcess({
        ...stack.env,
        ANTHROPIC_BASE_URL: sim.url,
        COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5',
        ...env,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      for (const w of workers) w.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exited));
      await stack.close();
      await sim.close();
    },
  };
}
