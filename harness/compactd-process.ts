import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';

import { onExit } from './exit-cleanup.js';
import { REPO_ROOT } from './repo-root.js';

/**
 * `node bin/compactd.mjs <role>` as a child process the harness owns: the way an operator
 * runs the service (the compiled dist/), so a test can SIGKILL it, a suite can supervise it
 * and the bench can read its logs and memory. The one place any harness starts one.
 */

export type Role = 'api' | 'worker' | 'llm-sim';

export interface SpawnCompactdOptions {
  /** names the process in the shared log and in errors (default: the role) */
  name?: string;
  /** every output line also goes there, prefixed with `[name]` (several processes may share one file) */
  logFile?: string;
  /** readiness by probe (e.g. GET /healthz) instead of the role's ready log line */
  readyWhen?: () => Promise<boolean>;
  /** arguments after the role */
  args?: string[];
  /** options for node itself (`--cpu-prof`, which NODE_OPTIONS refuses) */
  nodeArgs?: string[];
  /** keep every log line, not only the output's tail: `records` reads them (the bench's phase timing) */
  keepLines?: boolean;
}

export interface CompactdProcess {
  role: Role;
  name: string;
  child: ChildProcess;
  pid: number;
  /** resolves once the process logged that it serves (api) or takes jobs (worker); rejects if it exits first or stays silent too long */
  ready: Promise<void>;
  /** resolves with the exit code or signal name */
  exited: Promise<number | string>;
  /** epoch ms of the signal, when the harness stopped it (kill or stop) */
  killedAt: number | null;
  /** the output's tail (stdout and stderr) */
  output(): string;
  /** parsed JSON log records whose `msg` is one of `messages` (needs `keepLines`) */
  records(messages: readonly string[]): Array<Record<string, unknown>>;
  /** resolves when an output line satisfies `predicate`; rejects on exit or after `timeoutMs` */
  waitForLog(predicate: (line: string) => boolean, timeoutMs: number): Promise<void>;
  /** peak and current resident set size (kB) from /proc/<pid>/status; null once gone */
  memory(): { peakRssKb: number; rssKb: number } | null;
  /** sends `signal` (default SIGKILL) unless it already exited; resolves with the exit */
  kill(signal?: NodeJS.Signals): Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`: a graceful stop that cannot hang */
  stop(graceMs?: number): Promise<number | string>;
}

/** Output kept in memory per process (the tail); the whole of it goes to `logFile` when given. */
const OUTPUT_TAIL_CHARS = 200_000;
const READY_TIMEOUT_MS = 60_000;
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
 * The last `limit` characters of a process's output, kept as the chunks that arrived and joined
 * only when read. Re-slicing one string per chunk copied the whole tail on every chunk: under the
 * load suite (two log lines per request) that was the harness's largest CPU cost, and the harness's
 * event loop is the load generator's.
 */
export function outputTail(limit: number) {
  const chunks: string[] = [];
  let length = 0;
  return {
    push(text: string) {
      chunks.push(text);
      length += text.length;
      while (chunks.length > 1 && length - (chunks[0] as string).length >= limit) length -= (chunks.shift() as string).length;
    },
    text: () => chunks.join('').slice(-limit),
    /** characters kept (what the tail costs in memory) */
    held: () => length,
  };
}

export function spawnCompactd(role: Role, env: Record<string, string>, options: SpawnCompactdOptions = {}): CompactdProcess {
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
  if (child.pid === undefined) throw new Error(`could not start compactd ${role}`);
  // An interrupted run must not leave a worker behind.
  const forget = onExit(() => child.kill('SIGKILL'));
  const tail = outputTail(OUTPUT_TAIL_CHARS);
  const output = () => tail.text();
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  const capture = () => {
    let partial = '';
    return (chunk: Buffer) => {
      const text = chunk.toString();
      tail.push(text);
      // Whole lines only, each tagged with the process, so a shared log interleaves cleanly.
      const complete = (partial + text).split('\n');
      partial = complete.pop() ?? '';
      if (options.logFile && complete.length > 0) logStream(options.logFile).write(complete.map((line) => `[${name}] ${line}\n`).join(''));
      for (const line of complete) {
        if (options.keepLines && line.length > 0) lines.push(line);
        for (const listen of listeners) listen(line);
      }
    };
  };
  child.stdout?.on('data', capture());
  child.stderr?.on('data', capture());
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      forget();
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  const gone = () => child.exitCode !== null || child.signalCode !== null;

  const waitForLog = (predicate: (line: string) => boolean, timeoutMs: number, what = 'the expected log line') =>
    new Promise<void>((resolve, reject) => {
      if (output().split('\n').some(predicate)) return resolve();
      const timer = setTimeout(
        () => finish(new Error(`${name}: ${what} not seen within ${timeoutMs} ms:\n${output().slice(-4_000)}`)),
        timeoutMs,
      );
      timer.unref();
      const listen = (line: string) => {
        if (predicate(line)) finish();
      };
      function finish(error?: Error) {
        clearTimeout(timer);
        listeners.delete(listen);
        if (error) reject(error);
        else resolve();
      }
      listeners.add(listen);
      void exited.then((code) => finish(new Error(`${name} exited (${code}) before ${what}:\n${output().slice(-4_000)}`)));
    });

  const ready = options.readyWhen
    ? probeUntilReady(name, options.readyWhen, gone, exited, output)
    : waitForLog((line) => line.includes(READY_LINES[role]), READY_TIMEOUT_MS, 'it was ready');
  // A process killed before `ready` settles must not surface as an unhandled rejection.
  ready.catch(() => undefined);

  const proc: CompactdProcess = {
    role,
    name,
    child,
    pid: child.pid,
    ready,
    exited,
    killedAt: null,
    output,
    records(messages) {
      const wanted = messages.map((m) => `"msg":"${m}"`);
      return lines.filter((line) => wanted.some((w) => line.includes(w))).map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    waitForLog: (predicate, timeoutMs) => waitForLog(predicate, timeoutMs),
    memory: () => readMemory(child.pid ?? -1),
    async kill(signal = 'SIGKILL') {
      if (!gone()) {
        proc.killedAt = Date.now();
        child.kill(signal);
      }
      return exited;
    },
    async stop(graceMs = 20_000) {
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await proc.kill('SIGTERM');
      clearTimeout(timer);
      return code;
    },
  };
  return proc;
}

/** Readiness by probe (independent of the log level), every 100 ms until it holds, the process exits or time runs out. */
function probeUntilReady(
  name: string,
  probe: () => Promise<boolean>,
  gone: () => boolean,
  exited: Promise<number | string>,
  output: () => string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    void exited.then((code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${output().slice(-4_000)}`)));
    void (async () => {
      while (!gone()) {
        if (await probe().catch(() => false)) return resolve();
        if (Date.now() > deadline) return reject(new Error(`${name} not ready after ${READY_TIMEOUT_MS} ms:\n${output().slice(-4_000)}`));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
  });
}

function readMemory(pid: number): { peakRssKb: number; rssKb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (label: string) => Number(new RegExp(`^${label}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { peakRssKb: field('VmHWM'), rssKb: field('VmRSS') };
  } catch {
    return null;
  }
}
