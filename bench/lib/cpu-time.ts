import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time from /proc (Linux): what a set of processes used, and how busy the whole machine
 * was, over a measured span. Used to say which resource a scale-out point ran out of.
 */

const TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** A process's command name, its CPU seconds and those of its children that exited, from /proc/<pid>/stat. */
function readStat(pid: number | string): { comm: string; seconds: number; reapedSeconds: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) may hold spaces: count fields after its closing parenthesis
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
    reapedSeconds: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND,
  };
}

/** user + system CPU seconds of one process so far; NaN when it is gone or /proc is absent */
export function processCpuSeconds(pid: number): number {
  try {
    return readStat(pid).seconds;
  } catch {
    return Number.NaN;
  }
}

/** busy and total CPU seconds of the whole machine (all cores) so far */
export function machineCpuSeconds(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const total = ticks.reduce((sum, t) => sum + t, 0);
    return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

export interface CpuSpan {
  /** CPU seconds the watched processes used during the span */
  processSeconds: number;
  /** average number of cores busy machine-wide during the span (every process, not only ours) */
  machineCoresBusy: number;
}

/** Starts watching `pids`; the returned function ends the span and reports it. */
export function watchCpu(pids: readonly number[]): () => CpuSpan {
  const before = pids.map(processCpuSeconds);
  const machineBefore = machineCpuSeconds();
  const wallStart = performance.now();
  return () => {
    const after = pids.map(processCpuSeconds);
    const machineAfter = machineCpuSeconds();
    const wallSeconds = (performance.now() - wallStart) / 1000;
    const processSeconds = after.reduce((sum, t, i) => sum + (t - (before[i] ?? Number.NaN)), 0);
    return { processSeconds, machineCoresBusy: (machineAfter.busy - machineBefore.busy) / wallSeconds };
  };
}

/** Postgres and Redis are found by their command names; compactd's own processes by pid. */
const SERVICE_COMMANDS: Record<string, string> = { postgres: 'Postgres', 'redis-server': 'Redis' };

/** CPU seconds of every process on the machine now, by pid, with its command name. */
function allProcessCpu(): Map<number, { comm: string; seconds: number }> {
  const out = new Map<number, { comm: string; seconds: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { comm, seconds, reapedSeconds } = readStat(entry);
      // a service's children that exited (Postgres backends that closed) are counted by their parent
      out.set(Number(entry), { comm, seconds: seconds + (comm in SERVICE_COMMANDS ? reapedSeconds : 0) });
    } catch {
      // the process ended between the listing and the read
    }
  }
  return out;
}

/**
 * Starts watching where the machine's CPU goes: the named processes (by pid), Postgres and
 * Redis (every process of that name, backends started during the span included), and the
 * rest of the machine. The returned function ends the span: CPU seconds by role.
 */
export function watchCpuByRole(pids: Record<string, number>): () => Record<string, number> {
  const before = allProcessCpu();
  const machineBefore = machineCpuSeconds();
  return () => {
    const after = allProcessCpu();
    const machineAfter = machineCpuSeconds();
    const roleOfPid = new Map(Object.entries(pids).map(([role, pid]) => [pid, role]));
    const seconds: Record<string, number> = Object.fromEntries(
      [...Object.keys(pids), ...Object.values(SERVICE_COMMANDS)].map((role) => [role, 0]),
    );
    for (const [pid, now] of after) {
      const role = roleOfPid.get(pid) ?? SERVICE_COMMANDS[now.comm];
      if (role === undefined) continue;
      seconds[role] = (seconds[role] ?? 0) + now.seconds - (before.get(pid)?.seconds ?? 0);
    }
    const named = Object.values(seconds).reduce((sum, s) => sum + s, 0);
    seconds['rest of the machine'] = machineAfter.busy - machineBefore.busy - named;
    return seconds;
  };
}
