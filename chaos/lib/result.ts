/**
 * What a chaos scenario reports: measured figures, the targets they are held to, and notes
 * on how they were measured. The e2e tests assert every target; `npm run chaos` writes them
 * to RELIABILITY.md and chaos/results/<date>.json.
 */

export type FigureValue = number | string | boolean;

export interface Target {
  figure: string;
  op: '==' | '<=' | '>=';
  value: number;
  met: boolean;
  /** the measured value, copied for reports */
  actual: FigureValue;
}

export interface ScenarioResult {
  id: string;
  title: string;
  variant: 'quick' | 'full';
  startedAt: string;
  durationMs: number;
  figures: Record<string, FigureValue>;
  targets: Target[];
  /** what was run and how it was measured (parameters, definitions) */
  notes: string[];
}

export class ScenarioRecorder {
  readonly figures: Record<string, FigureValue> = {};
  readonly targets: Target[] = [];
  readonly notes: string[] = [];
  private readonly started = Date.now();

  constructor(
    readonly id: string,
    readonly title: string,
    readonly variant: 'quick' | 'full',
  ) {}

  figure(name: string, value: FigureValue): void {
    this.figures[name] = value;
  }

  /** Records `name` and holds it to `op value`. */
  expect(name: string, value: number, op: Target['op'], bound: number): void {
    this.figures[name] = value;
    const met = op === '==' ? value === bound : op === '<=' ? value <= bound : value >= bound;
    this.targets.push({ figure: name, op, value: bound, met, actual: value });
  }

  note(text: string): void {
    this.notes.push(text);
  }

  finish(): ScenarioResult {
    return {
      id: this.id,
      title: this.title,
      variant: this.variant,
      startedAt: new Date(this.started).toISOString(),
      durationMs: Date.now() - this.started,
      figures: { ...this.figures },
      targets: [...this.targets],
      notes: [...this.notes],
    };
  }
}

/** The targets a result missed, one line each (empty when all are met). */
export function missedTargets(result: ScenarioResult): string[] {
  return result.targets.filter((t) => !t.met).map((t) => `${result.id}: ${t.figure} = ${String(t.actual)}, target ${t.op} ${t.value}`);
}

/** Percentile by nearest rank over unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** A seeded PRNG (mulberry32) so a run's random choices can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function pickRandom<T>(items: readonly T[], random: () => number): T | null {
  return items.length === 0 ? null : (items[Math.floor(random() * items.length)] as T);
}
