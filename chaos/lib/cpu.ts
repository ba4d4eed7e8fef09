import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * CPU accounting for latency figures on a shared machine (Linux /proc): how busy the whole
 * machine was, how much of that was this suite (the harness, its compactd children, its
 * private redis-server and Postgres cluster) and how much belonged to other processes.
 */

export interface CpuSample {
  /** jiffies since boot, all CPUs */
  total: number;
  busy: number;
  steal: number;
  ours: number;
}

function procStat(pid: number): { ppid: number; cpu: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command may contain spaces and parentheses: fields start after the last ')'
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** This process, every descendant, and the private Postgres cluster's processes (its postmaster detaches). */
function ourProcesses(postgresDataDirs: readonly string[]): number[] {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const children = new Map<number, number[]>();
  for (const pid of all) {
    const stat = procStat(pid);
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  }
  const roots = [process.pid];
  for (const dir of postgresDataDirs) {
    const pidFile = path.join(dir, 'postmaster.pid');
    if (existsSync(pidFile)) roots.push(Number(readFileSync(pidFile, 'utf8').split('\n')[0]));
  }
  const ours = new Set<number>();
  const visit = (pid: number) => {
    if (ours.has(pid)) return;
    ours.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  roots.forEach(visit);
  return [...ours];
}

export function sampleCpu(postgresDataDirs: readonly string[]): CpuSample | null {
  if (!existsSync('/proc/stat')) return null;
  const [, ...values] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = values.map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  const ours = ourProcesses(postgresDataDirs).reduce((sum, pid) => sum + (procStat(pid)?.cpu ?? 0), 0);
  return { total, busy: total - idle - iowait, steal, ours };
}

/** Shares of the machine's CPU time between two samples, in percent. */
export function cpuShares(
  from: CpuSample | null,
  to: CpuSample | null,
): { busy: number; ours: number; others: number; steal: number } | null {
  if (!from || !to || to.total <= from.total) return null;
  const span = to.total - from.total;
  const pct = (v: number) => Math.round((1000 * v) / span) / 10;
  const busy = to.busy - from.busy;
  const ours = Math.min(busy, to.ours - from.ours);
  return { busy: pct(busy), ours: pct(ours), others: pct(Math.max(0, busy - ours)), steal: pct(to.steal - from.steal) };
}
