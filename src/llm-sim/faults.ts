/**
 * Fault injection of llm-sim: each completion call draws once from the seeded PRNG and
 * may fail the way real providers fail. A `script` of faults is consumed first, one per
 * call, for tests that need an exact sequence ("429, then success").
 */

export const FAULT_KINDS = ['rate_limit', 'overloaded', 'server_error', 'hang', 'empty', 'truncated', 'malformed', 'auth'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** CLI aliases: `--faults 429=0.1,529=0.05,500=0.02` */
const ALIASES: Readonly<Record<string, FaultKind>> = { '429': 'rate_limit', '529': 'overloaded', '500': 'server_error', '401': 'auth' };

export interface SimFaults {
  /** probability per call of each fault; their sum must be ≤ 1 */
  rates?: Partial<Record<FaultKind, number>>;
  /** consumed one per call before `rates` apply; `none` answers normally */
  script?: Array<FaultKind | 'none'>;
  /** wait the 429 asks for (default 1000 ms) */
  retryAfterMs?: number;
  /** which header(s) carry it: both (default, as OpenAI does), seconds only, ms only, or none */
  retryAfterHeader?: 'both' | 'seconds' | 'ms' | 'none';
}

export function isFaultKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value);
}

/** Checks rates and script; returns a copy safe to keep. */
export function validateFaults(faults: SimFaults): SimFaults {
  let sum = 0;
  for (const [kind, rate] of Object.entries(faults.rates ?? {})) {
    if (!isFaultKind(kind)) throw new Error(`unknown fault "${kind}" (expected ${FAULT_KINDS.join(', ')})`);
    if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) throw new Error(`fault rate of ${kind} must be within [0, 1]`);
    sum += rate;
  }
  if (sum > 1 + 1e-9) throw new Error(`fault rates add up to ${sum}, more than 1`);
  for (const entry of faults.script ?? []) {
    if (entry !== 'none' && !isFaultKind(entry)) throw new Error(`unknown fault "${entry}" in script`);
  }
  return { ...faults, rates: { ...faults.rates }, script: [...(faults.script ?? [])] };
}

/** Parses `rate_limit=0.1,529=0.05,hang=0.01`. */
export function parseFaultRates(spec: string): Partial<Record<FaultKind, number>> {
  const rates: Partial<Record<FaultKind, number>> = {};
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const [name = '', value = ''] = part.split('=');
    const kind = ALIASES[name] ?? name;
    if (!isFaultKind(kind)) throw new Error(`unknown fault "${name}" (expected ${FAULT_KINDS.join(', ')} or 429/529/500/401)`);
    rates[kind] = Number(value);
  }
  return rates;
}

/**
 * The fault for the next call (or null). Exactly one draw per call, so the sequence of
 * outcomes depends only on the seed and the call order, not on which rates are set.
 */
export function pickFault(faults: SimFaults, draw: number): FaultKind | null {
  const scripted = faults.script?.shift();
  if (scripted !== undefined) return scripted === 'none' ? null : scripted;
  let cumulative = 0;
  for (const kind of FAULT_KINDS) {
    cumulative += faults.rates?.[kind] ?? 0;
    if (draw < cumulative) return kind;
  }
  return null;
}
