import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A `compactd api|worker` child process with its JSON log lines kept for phase timing. */
export interface CompactdChild {
  role: 'api' | 'worker';
  pid: number;
  /** raw log lines (pino JSON), in arrival order */
  lines: string[];
  /** parsed log records whose `msg` is one of `messages` */
  records(messages: readonly string[]): Array<Record<string, unknown>>;
  waitForLog(predicate: (line: string) => boolean, timeoutMs: number): Promise<void>;
  /** peak and current resident set size (kB) from /proc/<pid>/status; null when gone */
  memory(): { peakRssKb: number; rssKb: number } | null;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code or signal */
  stop(graceMs?: number): Promise<number | string>;
  exited: Promise<number | string>;
}

export interface SpawnOptions {
  env: Record<string, string>;
  /** write a V8 CPU profile (`--cpu-prof`) into this directory on exit */
  cpuProfDir?: string;
}

export function spawnCompactd(role: 'api' | 'worker', options: SpawnOptions): CompactdChild {
  const nodeArgs = options.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir] : [];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, path.join(repoRoot, 'bin/compactd.mjs'), role], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', LOG_PRETTY: 'false', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start compactd ${role}`);
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  const onData = (chunk: Buffer) => {
    const text = partial + chunk.toString('utf8');
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) if (line.length > 0) lines.push(line);
    for (const wake of waiters) wake();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  let gone = false;
  let stopping = false;
  void exited.then((how) => {
    gone = true;
    // An exit the bench did not ask for (a crash): say why, or a failed scenario only says "fetch failed".
    if (!stopping && how !== 0)
      process.stderr.write(`compactd ${role} exited with code ${how}; its last lines:\n${lines.slice(-10).join('\n')}\n`);
    for (const wake of waiters) wake();
  });
  const pid = child.pid;

  return {
    role,
    pid,
    lines,
    records(messages) {
      const wanted = messages.map((m) => `"msg":"${m}"`);
      return lines.filter((line) => wanted.some((w) => line.includes(w))).map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    waitForLog(predicate, timeoutMs) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`compactd ${role}: no matching log line within ${timeoutMs} ms\n${lines.slice(-20).join('\n')}`)),
          timeoutMs,
        );
        const check = () => {
          if (lines.some(predicate)) finish();
          else if (gone) finish(new Error(`compactd ${role} exited before the expected log line\n${lines.slice(-20).join('\n')}`));
        };
        function finish(error?: Error) {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve();
        }
        waiters.add(check);
        check();
      });
    },
    memory: () => readMemory(pid),
    async stop(graceMs = 20_000) {
      stopping = true;
      if (!gone) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    exited,
  };
}

function readMemory(pid: number): { peakRssKb: number; rssKb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { peakRssKb: field('VmHWM'), rssKb: field('VmRSS') };
  } catch {
    return null;
  }
}
