/**
 * Latency profiles of llm-sim (SPEC §7): time to first token, prefill speed and output
 * speed, modelled on what the small summarizer models deliver. A call's planned time is
 * first token + input / prefill rate, then one output token every 1 / output rate seconds.
 */

export interface LatencyProfile {
  name: string;
  firstTokenMs: number;
  /** input tokens processed per second before the first output token */
  prefillTokensPerSecond: number;
  outputTokensPerSecond: number;
  /** `fixed:<ms>`: every answer takes exactly this long, whatever its size */
  fixedMs?: number;
  /**
   * Answers list every identifier and sentence they see, whatever length the directive asks
   * for, until max_tokens stops them (`stop_reason: max_tokens`): an instruction-following
   * model told to keep every path, error and quoted name, on a source richer than its cap.
   */
  listsEverything?: boolean;
}

export const PROFILES: Readonly<Record<string, LatencyProfile>> = {
  instant: { name: 'instant', firstTokenMs: 0, prefillTokensPerSecond: Infinity, outputTokensPerSecond: Infinity },
  /** Claude Haiku-like: ~0.6 s to first token, ~70 tokens/s out */
  haiku: { name: 'haiku', firstTokenMs: 600, prefillTokensPerSecond: 30_000, outputTokensPerSecond: 70 },
  /** gpt-4o-mini-like */
  mini: { name: 'mini', firstTokenMs: 450, prefillTokensPerSecond: 40_000, outputTokensPerSecond: 85 },
  /** Gemini Flash-like: quick to start, fast to write */
  flash: { name: 'flash', firstTokenMs: 350, prefillTokensPerSecond: 80_000, outputTokensPerSecond: 180 },
  /** Haiku's pace, answers that list everything they see and fill their cap */
  'list-everything': {
    name: 'list-everything',
    firstTokenMs: 600,
    prefillTokensPerSecond: 30_000,
    outputTokensPerSecond: 70,
    listsEverything: true,
  },
};

export const PROFILE_NAMES = [...Object.keys(PROFILES), 'fixed:<ms>'];

/** `instant`, `haiku`, `mini`, `flash`, `list-everything` or `fixed:<ms>`; throws on anything else. */
export function parseProfile(spec: string): LatencyProfile {
  const known = PROFILES[spec];
  if (known !== undefined) return known;
  const fixed = /^fixed:(\d+)$/.exec(spec);
  if (fixed?.[1] !== undefined) {
    const ms = Number(fixed[1]);
    return { name: spec, firstTokenMs: ms, prefillTokensPerSecond: Infinity, outputTokensPerSecond: Infinity, fixedMs: ms };
  }
  throw new Error(`unknown latency profile "${spec}" (expected one of ${PROFILE_NAMES.join(', ')})`);
}

export interface PlannedTiming {
  /** from request received to the first output token (headers of a stream go out here) */
  firstTokenMs: number;
  /** from request received to the last output token */
  totalMs: number;
}

export function plannedTiming(profile: LatencyProfile, inputTokens: number, outputTokens: number): PlannedTiming {
  if (profile.fixedMs !== undefined) return { firstTokenMs: profile.fixedMs, totalMs: profile.fixedMs };
  const firstTokenMs = profile.firstTokenMs + (inputTokens / profile.prefillTokensPerSecond) * 1000;
  const writeMs = (Math.max(0, outputTokens - 1) / profile.outputTokensPerSecond) * 1000;
  return { firstTokenMs, totalMs: firstTokenMs + writeMs };
}
