import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Output kept in memory per process (the tail); the whole of it goes to `logFile` when given. */
const OUTPUT_TAIL_CHARS = 200_000;
const READY_TIMEOUT_MS = 60_000;

export interface CompactdProcess {
  role: Role;
  name: string;
  child: ChildProcess;
  pid: number;
  /** resolves once the process logged that it serves (api) or takes jobs (worker) */
  ready: Promise<void>;
  /** resolves with the exit code or signal name */
  exited: Promise<number | string>;
  /** epoch ms of the signal, when this harness stopped it (SIGKILL, or SIGTERM for a graceful stop) */
  killedAt: number | null;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

export type Role = 'api' | 'worker' | 'llm-sim';

// Every child still running when this process exits is killed with it (an interrupted run
// must not leave workers behind).
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const READY_LINES: Record<Role, string> = {
  api: 'compactd api listening',
  worker: 'compactd workers started',
  'llm-sim': 'llm-sim listening on',
};

// One append stream per log file, shared by every process writing to it (async: the harness
// may be generating load and must not block on disk writes).
const logStreams = new Map<string, WriteStream>();
function logStream(file: string): WriteStream {
  let stream = logStreams.get(file);
  if (!stream) {
    stream = createWriteStream(file, { flags: 'a' });
    logStreams.set(file, stream);
  }
  return stream;
}

/**
 * `node bin/compactd.mjs <role>` as a child process the harness owns (so it can SIGKILL it),
 * with JSON logs captured. `ready` rejects if the process exits or stays silent too long.
 */
export function spawnCompactd(
  role: Role,
  env: Record<string, string>,
  options: { name?: string; logFile?: string; readyWhen?: () => Promise<boolean>; args?: string[]; nodeArgs?: string[] } = {},
): CompactdProcess {
  const name = options.name ?? role;
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), path.join(REPO_ROOT, 'bin/compactd.mjs'), role, ...(options.args ?? [])],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', LOG_PRETTY: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  let onLine: ((text: string) => void) | null = null;
  const capture = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = chunk.toString();
      output = (output + text).slice(-OUTPUT_TAIL_CHARS);
      // Whole lines only, each tagged with the process, so the shared log interleaves cleanly.
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      if (options.logFile && lines.length > 0) logStream(options.logFile).write(lines.map((line) => `[${name}] ${line}\n`).join(''));
      onLine?.(output);
    };
  };
  child.stdout?.on('data', capture());
  child.stderr?.on('data', capture());
  running.add(child);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} not ready after ${READY_TIMEOUT_MS} ms:\n${output.slice(-4_000)}`)),
      READY_TIMEOUT_MS,
    );
    const done = () => {
      clearTimeout(timer);
      onLine = null;
      resolve();
    };
    if (options.readyWhen) {
      // Readiness by probe (independent of the log level).
      const probe = options.readyWhen;
      void (async () => {
        while (child.exitCode === null && child.signalCode === null) {
          if (await probe().catch(() => false)) return done();
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
    } else {
      onLine = (text) => {
        if (text.includes(READY_LINES[role])) done();
      };
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it was ready:\n${output.slice(-4_000)}`));
    });
  });
  // A process that is killed before `ready` settles must not surface as an unhandled rejection.
  ready.catch(() => undefined);
  const proc: CompactdProcess = {
    role,
    name,
    child,
    pid: child.pid ?? -1,
    ready,
    exited,
    killedAt: null,
    output: () => output,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) {
        proc.killedAt = Date.now();
        child.kill(signal);
      }
      return exited;
    },
  };
  return proc;
}
