import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
