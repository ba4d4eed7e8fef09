import { describe, expect, it } from 'vitest';

import type { ContextMeasures } from '../../../eval/measure.js';
import { renderReport } from '../../../eval/report.js';
import type { CaseReport, MeasureRow } from '../../../eval/run-case.js';
import {
  aggregateByVariant,
  clipArchiveBudget,
  comparableSize,
  continuationGoals,
  halfFigures,
  meetsGoal,
  peerComparisons,
  pool,
} from '../../../eval/summary.js';

function measures(found: number, total: number, reduction: number, summaryTokens = 1000): ContextMeasures {
  const r = { found, total, ratio: total === 0 ? 1 : found / total, byKind: {} };
  return {
    tokensBefore: 10_000,
    tokensAfter: Math.round(10_000 * (1 - reduction)),
    summaryTokens,
    reduction,
    retentionBeforeGate: { ...r, found: Math.max(0, found - 1), ratio: Math.max(0, found - 1) / total },
    retentionAfterGate: r,
    retentionBeforeResummary: r,
    instructions: { covered: 1, total: 2, ratio: 0.5 },
    requests: { covered: 0, total: 0, ratio: null },
    lostExamples: {},
    missedStatements: [],
    probes: null,
  };
}

const row = (variant: string, m: ContextMeasures | null, engine: MeasureRow['engine'] = 'local'): MeasureRow => ({
  system: engine === 'peer' ? 'Claude Code' : 'compactd',
  variant,
  label: variant,
  engine,
  strategy: engine === 'peer' ? null : 'reset',
  job: null,
  measures: m,
});

const caseOf = (id: string, rows: MeasureRow[]): CaseReport => ({
  id,
  collection: 'claude-code',
  half: 'development',
  source: `${id}.jsonl`,
  messages: 10,
  tokensBefore: 10_000,
  contextLimit: 12_500,
  peerPreTokens: null,
  identifiers: { total: 100, byKind: {} },
  instructions: 2,
  requests: 0,
  rows,
});

describe('meetsGoal', () => {
  it.each([
    [99, 0.7, true],
    [100, 0.95, true],
    [98, 0.95, false],
    [100, 0.69, false],
  ])('%i/100 at %f reduction → %s', (found, reduction, expected) => {
    expect(meetsGoal(measures(found, 100, reduction))).toBe(expected);
  });
});

describe('comparableSize', () => {
  it.each([
    [3000, true],
    [4500, true],
    [1500, true],
    [4501, false],
    [1499, false],
  ])('%i tokens against a 3000-token peer → %s', (tokens, expected) => {
    expect(comparableSize(measures(1, 1, 0.9, tokens), measures(1, 1, 0.9, 3000))).toBe(expected);
  });
});

describe('pool', () => {
  it('weighs runs by their identifier counts', () => {
    expect(pool([measures(9, 10, 0.9).retentionAfterGate, measures(45, 90, 0.9).retentionAfterGate])).toEqual({
      runs: 2,
      found: 54,
      total: 100,
      ratio: 0.54,
    });
  });
});

describe('aggregateByVariant and peerComparisons', () => {
  const cases = [
    caseOf('a', [
      row('peer', measures(20, 100, 0.96, 3000), 'peer'),
      row('reset-local', measures(80, 100, 0.95, 4000)),
      row('failed', null),
    ]),
    caseOf('b', [row('peer', measures(30, 100, 0.96, 3000), 'peer'), row('reset-local', measures(99, 100, 0.9, 9000))]),
  ];

  it('pools per variant, skipping failed runs, and counts the runs meeting the goal', () => {
    const reset = aggregateByVariant(cases).find((a) => a.variant === 'reset-local');
    expect(reset).toMatchObject({ runs: 2, afterGate: { found: 179, total: 200 }, goalMet: 1, instructions: { covered: 2, total: 4 } });
    expect(reset?.meanReduction).toBeCloseTo(0.925);
    expect(aggregateByVariant(cases).map((a) => a.variant)).toEqual(['peer', 'reset-local']);
  });

  it('sets each compactd run against the peer of its case', () => {
    const comparisons = peerComparisons(cases);
    expect(comparisons.map((c) => [c.caseId, c.comparable, Math.round(c.retentionGain * 100)])).toEqual([
      ['a', true, 60],
      ['b', false, 69],
    ]);
  });
});

describe('continuationGoals', () => {
  const withProbes = (answered: number, total: number, summaryTokens: number): ContextMeasures => ({
    ...measures(100, 100, 0.9, summaryTokens),
    probes: { answered, total, score: answered / total, byKind: {}, missed: [], spanMessages: 10 },
  });

  it('checks the default reset against the probe bar, the peer + 25 points (capped), 1.25× the peer and the budget', () => {
    const c = caseOf('cc-1', [
      row('peer', withProbes(6, 10, 3000), 'peer'),
      row('reset-local', withProbes(9, 10, 3600)),
      row('summarize-local', withProbes(1, 10, 9000)),
    ]);
    const [goals, ...rest] = continuationGoals([c], 3500);
    expect(rest).toEqual([]);
    expect(goals!.variant).toBe('reset-local');
    expect(goals!.checks.map((check) => check.met)).toEqual([false, true, true, false]);
    expect(goals!.checks[1]!.detail).toBe('90.0% vs 60.0% → target 85.0%');
  });

  it('caps the target at 100% and reads the budget from the policy when it has one', () => {
    const c = caseOf('cc-2', [row('peer', withProbes(9, 10, 3000), 'peer'), row('reset-local', withProbes(10, 10, 1000))]);
    expect(continuationGoals([c], 3500)[0]!.checks.every((check) => check.met)).toBe(true);
    expect(clipArchiveBudget({})).toBe(3500);
    expect(clipArchiveBudget({ clipArchiveMaxTokens: 2000 })).toBe(2000);
  });
});

describe('the halves in the goal section', () => {
  const withRecent = (answered: number, total: number, recent: number, summaryTokens: number): ContextMeasures => ({
    ...measures(100, 100, 0.9, summaryTokens),
    probes: {
      answered,
      total,
      score: answered / total,
      byKind: { 'recent-command': { answered: recent, total: 5 } },
      missed: [],
      spanMessages: 10,
    },
  });
  const cases: CaseReport[] = [
    caseOf('cc-dev', [row('peer', withRecent(5, 10, 1, 4000), 'peer'), row('reset-local', withRecent(10, 10, 5, 2000))]),
    {
      ...caseOf('cc-held', [row('peer', withRecent(5, 10, 2, 2000), 'peer'), row('reset-local', withRecent(9, 10, 4, 1000))]),
      half: 'held-out',
    },
  ];

  it('checks the last five commands of each reset on their own line', () => {
    const held = continuationGoals([cases[1]!], 3500)[0]!;
    expect(held.checks.find((c) => c.goal.startsWith('last 5 commands'))).toMatchObject({ met: false, detail: '80.0% (4/5)' });
  });

  it('reports each half apart: its cases, goal lines, probes, last commands and size against the peer', () => {
    const [development, heldOut] = halfFigures(cases, 3500);
    expect(development).toEqual({
      half: 'development',
      caseIds: ['cc-dev'],
      goalLines: { met: 5, total: 5 },
      probes: { answered: 10, total: 10 },
      recentCommands: { answered: 5, total: 5 },
      peerSizeRatio: { min: 0.5, max: 0.5 },
    });
    expect(heldOut).toMatchObject({
      half: 'held-out',
      caseIds: ['cc-held'],
      goalLines: { met: 3, total: 5 },
      recentCommands: { answered: 4, total: 5 },
    });
  });

  it('renders both halves in EVAL.md, each with its own goal table', () => {
    const results = {
      version: 1,
      date: '2026-11-28T00:00:00.000Z',
      commit: null,
      quick: false,
      provider: null,
      sim: null,
      langchain: null,
      durationMs: 1000,
      cases,
    } as const;
    const report = renderReport({ ...results, cases: [...cases] }, { analysis: null, resultsFile: 'eval/results/x.json' });
    expect(report).toContain('### Development half: cc-dev\n\n**5 of 5 goal lines met.**');
    expect(report).toContain('### Held-out half: cc-held\n\n**3 of 5 goal lines met.**');
    expect(report).toContain('| cc-held | reset-local | last 5 commands ≥ 95.0% | **no** | 80.0% (4/5) |');
    expect(report).toContain('| Held-out half | 1 | 3 of 5 | 90.0% (9/10) | 80.0% (4/5) | 0.50–0.50× |');
  });
});
