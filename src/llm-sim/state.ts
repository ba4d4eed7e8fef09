import { type FaultKind, type SimFaults, validateFaults } from './faults.js';
import { createPrng } from './prng.js';
import { type LatencyProfile, parseProfile } from './profiles.js';
import { PromptCacheStore } from './prompt-cache.js';
import type { SimAnswer, SimApi, SimCompactionKind, SimEndpoint } from './types.js';

/** Mutable state of one llm-sim instance: its configuration, PRNG, in-flight count and call log. */

export interface SimSettings {
  profile: LatencyProfile;
  faults: SimFaults;
  seed: number;
  /** fraction of input identifiers the summary drops */
  lossRate: number;
  /** requests whose input exceeds this many tokens get the provider's context-length 400 */
  summarizeWindow: number | undefined;
  /** summary length as a fraction of the input tokens (bounded by max_tokens) */
  outputRatio: number;
  /**
   * Fixed usage reported as served from the prompt cache, to exercise cache accounting; while
   * either is above 0 it replaces the emulated cache (`cache`) in every answer.
   */
  promptCache: { readTokens: number; writeTokens: number };
  /** prompt caching as the providers price it (prompt-cache.ts): on or off, and the TTL a hit refreshes */
  cache: SimCacheSettings;
  /** added to the wall clock wherever the sim tells time (cache TTLs): tests move time forward with it */
  clockOffsetMs: number;
  /** length overrun: a share `rate` of answers runs `factor` times past the length they would have had */
  overrun: SimOverrun;
  /** headers added to every simulated API answer (a provider's `set-cookie`, organization id, …), for tests of what a gateway relays */
  responseHeaders: Record<string, string>;
}

export interface SimCacheSettings {
  enabled: boolean;
  /** default 300 000 (Anthropic's 5 minutes; OpenAI's too) */
  ttlMs: number;
}

export interface SimOverrun {
  /** share of answers that overrun, in [0, 1] */
  rate: number;
  /** how far past their length they run, in (1, 10] */
  factor: number;
}

/** Settings as JSON (POST /_sim/config, startLlmSim options): profile by name. */
export interface SimSettingsPatch {
  profile?: string | LatencyProfile;
  faults?: SimFaults;
  seed?: number;
  lossRate?: number;
  summarizeWindow?: number | null;
  outputRatio?: number;
  promptCache?: { readTokens?: number; writeTokens?: number };
  cache?: { enabled?: boolean; ttlMs?: number };
  clockOffsetMs?: number;
  overrun?: { rate?: number; factor?: number };
  responseHeaders?: Record<string, string>;
}

/** What a call was billed, as the provider reports it: input is the part neither read from nor written to the cache. */
export interface CallUsage {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

export interface CallRecord {
  id: number;
  api: SimApi;
  /** the route that answered it */
  endpoint: SimEndpoint;
  model: string;
  stream: boolean;
  /** epoch ms */
  startMs: number;
  firstTokenMs: number | null;
  endMs: number | null;
  /** the whole input the model read (cached or not) */
  inputTokens: number;
  outputTokens: number;
  /** the call's billed tokens, all iterations included (zeros until it is answered) */
  usage: CallUsage;
  /** the provider compaction the call performed, or null (a threshold-mode request under its trigger is null) */
  compaction: SimCompactionKind | null;
  maxTokens: number;
  /** the length the request's directive asks for, in tokens (null when it names none) */
  requestedTokens: number | null;
  /** whether this answer was drawn to overrun its length */
  overrun: boolean;
  /** calls in flight when this one started, itself included */
  concurrencyAtStart: number;
  /** how the answer ended (`length`: stopped at max_tokens), null until it is written */
  stop: SimAnswer['stop'] | null;
  /** the answer's text, kept with the body (for the most recent calls only) */
  answerText?: string;
  fault: FaultKind | null;
  status: number;
  outcome: 'pending' | 'ok' | 'error' | 'disconnected';
  /** the parsed request body (kept for the most recent calls only) */
  body?: unknown;
  /** the request's headers, names in lower case (kept with the body) */
  headers?: Record<string, string>;
}

export interface SimState {
  settings: SimSettings;
  /** the prompt cache; survives reset (it is provider state, like the signatures it issued) */
  cache: PromptCacheStore;
  random: () => number;
  /** a separate stream for the overrun draw, so fault sequences stay what they were for a seed */
  overrunRandom: () => number;
  inFlight: number;
  calls: CallRecord[];
  nextId: number;
  keepBodies: number;
  logLimit: number;
  /** resolved (and cleared) whenever the last in-flight call ends */
  idleWaiters: Array<() => void>;
}

export const DEFAULT_SETTINGS: SimSettings = {
  profile: parseProfile('instant'),
  faults: {},
  seed: 1,
  lossRate: 0,
  summarizeWindow: undefined,
  outputRatio: 0.08,
  promptCache: { readTokens: 0, writeTokens: 0 },
  cache: { enabled: true, ttlMs: 300_000 },
  clockOffsetMs: 0,
  overrun: { rate: 0, factor: 1.5 },
  responseHeaders: {},
};

/** The overrun draws' stream differs from the faults' for the same seed. */
const OVERRUN_STREAM = 0x9e3779b9;
const overrunPrng = (seed: number): (() => number) => createPrng(seed ^ OVERRUN_STREAM);

export function createSimState(patch: SimSettingsPatch, limits: { keepBodies: number; logLimit: number }): SimState {
  const settings = applySettings(DEFAULT_SETTINGS, patch);
  return {
    settings,
    cache: new PromptCacheStore(),
    random: createPrng(settings.seed),
    overrunRandom: overrunPrng(settings.seed),
    inFlight: 0,
    calls: [],
    nextId: 1,
    idleWaiters: [],
    ...limits,
  };
}

/** Validated merge; throws an Error whose message names the bad field. */
export function applySettings(current: SimSettings, patch: SimSettingsPatch): SimSettings {
  const next: SimSettings = { ...current, promptCache: { ...current.promptCache }, cache: { ...current.cache } };
  if (patch.profile !== undefined) next.profile = typeof patch.profile === 'string' ? parseProfile(patch.profile) : patch.profile;
  if (patch.faults !== undefined) next.faults = validateFaults(patch.faults);
  if (patch.seed !== undefined) {
    if (!Number.isInteger(patch.seed)) throw new Error('seed must be an integer');
    next.seed = patch.seed;
  }
  if (patch.lossRate !== undefined) {
    if (!(patch.lossRate >= 0 && patch.lossRate <= 1)) throw new Error('lossRate must be within [0, 1]');
    next.lossRate = patch.lossRate;
  }
  if (patch.summarizeWindow !== undefined) {
    if (patch.summarizeWindow !== null && !(Number.isInteger(patch.summarizeWindow) && patch.summarizeWindow > 0)) {
      throw new Error('summarizeWindow must be a positive integer');
    }
    next.summarizeWindow = patch.summarizeWindow ?? undefined;
  }
  if (patch.outputRatio !== undefined) {
    if (!(patch.outputRatio > 0 && patch.outputRatio <= 10)) throw new Error('outputRatio must be within (0, 10]');
    next.outputRatio = patch.outputRatio;
  }
  if (patch.promptCache !== undefined) {
    next.promptCache = { readTokens: patch.promptCache.readTokens ?? 0, writeTokens: patch.promptCache.writeTokens ?? 0 };
  }
  if (patch.cache !== undefined) next.cache = validateCache({ ...current.cache, ...patch.cache });
  if (patch.clockOffsetMs !== undefined) {
    if (typeof patch.clockOffsetMs !== 'number' || !Number.isFinite(patch.clockOffsetMs))
      throw new Error('clockOffsetMs must be a finite number');
    next.clockOffsetMs = patch.clockOffsetMs;
  }
  if (patch.overrun !== undefined) next.overrun = validateOverrun({ ...current.overrun, ...patch.overrun });
  if (patch.responseHeaders !== undefined) next.responseHeaders = validateHeaders(patch.responseHeaders);
  return next;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function validateHeaders(headers: Record<string, string>): Record<string, string> {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new Error('responseHeaders must be an object of header names to strings');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new Error(`responseHeaders: "${name}" is not a header name`);
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw new Error(`responseHeaders.${name} must be a string on one line`);
    out[name.toLowerCase()] = value;
  }
  return out;
}

function validateCache(cache: SimCacheSettings): SimCacheSettings {
  if (typeof cache.enabled !== 'boolean') throw new Error('cache.enabled must be a boolean');
  if (typeof cache.ttlMs !== 'number' || !(Number.isFinite(cache.ttlMs) && cache.ttlMs > 0))
    throw new Error('cache.ttlMs must be a positive number');
  return { enabled: cache.enabled, ttlMs: cache.ttlMs };
}

/** The sim's clock: the wall clock moved by `clockOffsetMs`. */
export function simNow(state: SimState): number {
  return Date.now() + state.settings.clockOffsetMs;
}

/** Moves the sim's clock forward (or back) by `ms`; returns the new offset. */
export function advanceClock(state: SimState, ms: number): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new Error('advanceMs must be a finite number');
  state.settings = { ...state.settings, clockOffsetMs: state.settings.clockOffsetMs + ms };
  return state.settings.clockOffsetMs;
}

function validateOverrun(overrun: SimOverrun): SimOverrun {
  if (typeof overrun.rate !== 'number' || !(overrun.rate >= 0 && overrun.rate <= 1)) throw new Error('overrun.rate must be within [0, 1]');
  if (typeof overrun.factor !== 'number' || !(overrun.factor > 1 && overrun.factor <= 10))
    throw new Error('overrun.factor must be within (1, 10]');
  return { rate: overrun.rate, factor: overrun.factor };
}

export function configure(state: SimState, patch: SimSettingsPatch): void {
  const reseed = patch.seed !== undefined;
  state.settings = applySettings(state.settings, patch);
  if (reseed) {
    state.random = createPrng(state.settings.seed);
    state.overrunRandom = overrunPrng(state.settings.seed);
  }
}

/** Clears the log and any fault script, and restarts the PRNG from the seed (the prompt cache stays: clearCache). */
export function resetState(state: SimState): void {
  state.calls = [];
  state.settings = { ...state.settings, faults: { ...state.settings.faults, script: [] } };
  state.random = createPrng(state.settings.seed);
  state.overrunRandom = overrunPrng(state.settings.seed);
}

export function recordCall(state: SimState, record: CallRecord): void {
  state.calls.push(record);
  if (state.calls.length > state.logLimit) state.calls.splice(0, state.calls.length - state.logLimit);
  // Request bodies of compaction calls are large; only the most recent ones are kept.
  const stale = state.calls[state.calls.length - 1 - state.keepBodies];
  if (stale !== undefined) {
    delete stale.body;
    delete stale.headers;
    delete stale.answerText;
  }
}

/** JSON view of the settings (GET /_sim/config). */
export function describeSettings(settings: SimSettings): Record<string, unknown> {
  return { ...settings, profile: settings.profile.name, summarizeWindow: settings.summarizeWindow ?? null };
}

/** Resolves when no call is in flight. */
export function whenIdle(state: SimState): Promise<void> {
  if (state.inFlight === 0) return Promise.resolve();
  return new Promise((resolve) => state.idleWaiters.push(resolve));
}

export function endCall(state: SimState): void {
  state.inFlight -= 1;
  if (state.inFlight === 0) for (const resolve of state.idleWaiters.splice(0)) resolve();
}
