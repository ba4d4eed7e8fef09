import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { REPO_ROOT as repoRoot } from '../../harness/index.js';

/**
 * Reads a V8 `.cpuprofile` (`node --cpu-prof`) and ranks where the time went: self time
 * per function and per area (a package under node_modules, a folder of src/, node
 * internals, GC). Idle time is left out: the question is what the busy process did.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  file: string;
  busyMs: number;
  wallMs: number;
  topFunctions: Array<{ name: string; selfMs: number; share: number }>;
  topAreas: Array<{ area: string; selfMs: number; share: number }>;
  /** compactd's own functions by inclusive time (self + callees): which service code drives the cost */
  topServiceInclusive: Array<{ name: string; totalMs: number; share: number }>;
}

/** A repository path named by its source: the processes run the compiled dist/x.js of src/x.ts. */
function asSource(inRepo: string): string {
  return inRepo.startsWith(`dist${path.sep}`) ? `src${inRepo.slice('dist'.length).replace(/\.js$/, '.ts')}` : inRepo;
}

/** The repository-relative path of a compactd source file (src/…), or null. */
function serviceFile(url: string): string | null {
  if (!url.startsWith('file://')) return null;
  const inRepo = asSource(path.relative(repoRoot, url.replace(/^file:\/\//, '')));
  return inRepo.startsWith(`src${path.sep}`) ? inRepo : null;
}

function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules?.[1]) return modules[1];
  const relative = url.replace(/^file:\/\//, '');
  const inRepo = asSource(path.relative(repoRoot, relative));
  if (!inRepo.startsWith('..')) return inRepo.split(path.sep).slice(0, 2).join('/');
  return relative;
}

/**
 * Self time per node from the sample stream, counting only samples inside `window` (epoch
 * ms). The profile's clock is monotonic: it is pinned to the epoch by the process's exit,
 * which the caller observed at `window.exitMs` (good to a few ms).
 */
function selfTimes(profile: CpuProfile, window?: ProfileWindow): { byNode: Map<number, number>; wallMs: number } {
  const byNode = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const offsetMs = window ? window.exitMs - profile.endTime / 1000 : 0;
  let t = profile.startTime;
  for (let i = 0; i < samples.length; i += 1) {
    t += deltas[i] ?? 0;
    const ms = (deltas[i + 1] ?? 0) / 1000;
    const at = t / 1000 + offsetMs;
    if (window && (at < window.startMs || at > window.endMs)) continue;
    const id = samples[i] as number;
    byNode.set(id, (byNode.get(id) ?? 0) + ms);
  }
  const wallMs = window ? window.endMs - window.startMs : (profile.endTime - profile.startTime) / 1000;
  return { byNode, wallMs };
}

export interface ProfileWindow {
  startMs: number;
  endMs: number;
  /** when the profiled process was seen to exit */
  exitMs: number;
}

export function summarizeProfile(file: string, window?: ProfileWindow, top = 12): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const { byNode, wallMs } = selfTimes(profile, window);
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busyMs = 0;
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(root)') continue;
    const ms = byNode.get(node.id) ?? 0;
    if (ms === 0) continue;
    busyMs += ms;
    const area = areaOf(url, functionName);
    const name = `${functionName || '(anonymous)'} ${url ? `${area}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
  }
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, ms]) => ({ key, selfMs: Math.round(ms), share: busyMs > 0 ? Math.round((ms / busyMs) * 1000) / 10 : 0 }));
  const inclusive = serviceInclusive(profile, byNode);
  return {
    file: path.basename(file),
    topServiceInclusive: [...inclusive.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, totalMs: Math.round(ms), share: busyMs > 0 ? Math.round((ms / busyMs) * 1000) / 10 : 0 })),
    busyMs: Math.round(busyMs),
    wallMs: Math.round(wallMs),
    topFunctions: rank(byFunction).map(({ key, ...rest }) => ({ name: key, ...rest })),
    topAreas: rank(byArea).map(({ key, ...rest }) => ({ area: key, ...rest })),
  };
}

/** Inclusive time of every src/ function, each counted once per call path (recursion-safe). */
function serviceInclusive(profile: CpuProfile, selfByNode: Map<number, number>): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  const onPath = new Map<string, number>();
  const visit = (id: number): number => {
    const node = nodes.get(id);
    if (!node) return 0;
    const { functionName, url } = node.callFrame;
    const own = functionName === '(idle)' ? 0 : (selfByNode.get(id) ?? 0);
    const file = serviceFile(url);
    const key = file ? `${functionName || '(anonymous)'} (${file})` : null;
    if (key) onPath.set(key, (onPath.get(key) ?? 0) + 1);
    let total = own;
    for (const child of node.children ?? []) total += visit(child);
    if (key) {
      const depth = onPath.get(key) ?? 1;
      if (depth === 1) totals.set(key, (totals.get(key) ?? 0) + total);
      onPath.set(key, depth - 1);
    }
    return total;
  };
  const root = profile.nodes[0];
  if (root) visit(root.id);
  return totals;
}

/**
 * The newest main-thread profile written into `dir`. Files are named
 * CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the main thread (a worker
 * thread, such as a module loader's, writes a profile of its own).
 */
export function latestProfile(dir: string): string | null {
  const files = readdirSync(dir)
    .filter((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    .sort();
  const last = files.at(-1);
  return last ? path.join(dir, last) : null;
}

/** One line for BENCH.md: the areas that took the most busy time. */
export function bottleneckText(summary: ProfileSummary): string {
  const areas = summary.topAreas
    .slice(0, 5)
    .map((a) => `${a.area} ${a.share}%`)
    .join(', ');
  const fns = summary.topFunctions
    .slice(0, 4)
    .map((f) => `${f.name} (${f.share}%)`)
    .join('; ');
  const service = summary.topServiceInclusive
    .slice(0, 5)
    .map((f) => `${f.name} ${f.share}%`)
    .join('; ');
  return `CPU profile of the main thread (${summary.busyMs} ms busy of ${summary.wallMs} ms of workload): ${areas}. Hottest functions: ${fns}. compactd code by inclusive time: ${service}.`;
}
