import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Resident memory of processes the harness started, read from Linux /proc while a scenario
 * runs: one compactd process, or a private Postgres cluster (its postmaster and every
 * backend under it). Figures in MB.
 */

export interface Resident {
  /** resident set size: pages in RAM, shared pages counted in every process that maps them */
  rssMb: number;
  /** proportional set size: shared pages split between the processes mapping them, so sums are honest */
  pssMb: number;
}

const ZERO: Resident = { rssMb: 0, pssMb: 0 };

function kbField(text: string, field: string): number | null {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** One process's memory; zero when it is gone. PSS falls back to RSS where smaps_rollup cannot be read. */
export function residentOf(pid: number): Resident {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const rss = kbField(rollup, 'Rss');
    const pss = kbField(rollup, 'Pss');
    if (rss !== null && pss !== null) return { rssMb: rss / 1024, pssMb: pss / 1024 };
  } catch {
    // not readable (another user, or the process just ended): try status below
  }
  try {
    const rss = kbField(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') ?? 0;
    return { rssMb: rss / 1024, pssMb: rss / 1024 };
  } catch {
    return ZERO;
  }
}

function parentOf(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command may contain spaces and parentheses: fields start after the last ')'
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The postmaster of a private cluster and every process under it (backends come and go: read at each sample). */
export function postgresPids(dataDir: string): number[] {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(postmaster) || postmaster <= 0) return [];
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (parentOf(pid) === postmaster) pids.push(pid);
  }
  return pids;
}

/** The cluster's memory: the sum over its processes. */
export function postgresResident(dataDir: string): Resident {
  return postgresPids(dataDir)
    .map(residentOf)
    .reduce((sum, r) => ({ rssMb: sum.rssMb + r.rssMb, pssMb: sum.pssMb + r.pssMb }), ZERO);
}

export interface MemoryWatch {
  /** stops sampling; the figures before, at the peak, and the peak's growth over `before` */
  stop(): { before: Resident; max: Resident; growth: Resident; samples: number };
}

/**
 * Samples `read` every `everyMs` from now until `stop()`: the first sample is the baseline.
 * Sampling is synchronous /proc reads, small enough not to disturb what it measures.
 */
export function watchMemory(read: () => Resident, everyMs = 100): MemoryWatch {
  const before = read();
  const max = { ...before };
  let samples = 1;
  const take = () => {
    const now = read();
    samples += 1;
    max.rssMb = Math.max(max.rssMb, now.rssMb);
    max.pssMb = Math.max(max.pssMb, now.pssMb);
  };
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { before, max, growth: { rssMb: max.rssMb - before.rssMb, pssMb: max.pssMb - before.pssMb }, samples };
    },
  };
}
