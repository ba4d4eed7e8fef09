import { mkdirSync } from 'node:fs';
import path from 'node:path';

import type { BenchContext } from './context.js';
import { bottleneckText, latestProfile, type ProfileSummary, summarizeProfile } from './cpu-profile.js';

/**
 * Runs `workload` against a worker started with `--cpu-prof`, stops it (the profile is
 * written on exit) and summarizes the profile. Profiled runs are separate from measured
 * runs: the profiler itself costs time.
 */
export async function profileWorker(
  ctx: BenchContext,
  name: string,
  workload: () => Promise<void>,
  env: Record<string, string> = {},
): Promise<{ summary: ProfileSummary; text: string } | null> {
  const dir = path.join(ctx.profileDir, name);
  mkdirSync(dir, { recursive: true });
  await ctx.svc.startWorker(env, { cpuProfDir: dir });
  const startMs = Date.now();
  let endMs: number;
  try {
    await workload();
    endMs = Date.now();
  } finally {
    await ctx.svc.stopWorker();
  }
  const file = latestProfile(dir);
  if (!file) return null;
  const summary = summarizeProfile(file, { startMs, endMs, exitMs: Date.now() });
  return { summary, text: bottleneckText(summary) };
}

/** Same for the API child (ingest). */
export async function profileApi(
  ctx: BenchContext,
  name: string,
  workload: () => Promise<void>,
): Promise<{ summary: ProfileSummary; text: string } | null> {
  const dir = path.join(ctx.profileDir, name);
  mkdirSync(dir, { recursive: true });
  await ctx.svc.restartApi({ cpuProfDir: dir });
  const startMs = Date.now();
  let endMs: number;
  try {
    await workload();
    endMs = Date.now();
  } finally {
    await ctx.svc.apiChild.stop();
  }
  const exitMs = Date.now();
  await ctx.svc.restartApi();
  const file = latestProfile(dir);
  if (!file) return null;
  const summary = summarizeProfile(file, { startMs, endMs, exitMs });
  return { summary, text: bottleneckText(summary) };
}
