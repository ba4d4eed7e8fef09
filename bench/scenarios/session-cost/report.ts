import { figure, type ScenarioResult, type Table, type Target, target } from '../../lib/result.js';
import { round } from '../../lib/stats.js';
import { COST_TABLE } from '../../report/session-cost-svg.js';
import type { ArmKey, ArmRun, CompactionEvent } from './arm.js';
import { cacheReadShare, costByPart, priceCalls, type PricedCalls } from './pricing.js';

/**
 * The scenario's figures from the arms' runs: costs priced from the sim's log, waits and
 * probe scores from the compactions, and the issue's targets for compactd's default policy
 * (arm d, strategy auto) against the alternatives an agent has without compactd (a and e).
 */

export interface SessionRuns {
  /** short session name (first 8 characters of its id) */
  session: string;
  windowTokens: number;
  triggerTokens: number;
  runs: ArmRun[];
}

export interface ArmFigures {
  agent: PricedCalls;
  compaction: PricedCalls;
  totalUsd: number;
  waitMs: number;
  longestWaitMs: number;
  /** mean probe score over the arm's scored compactions (null: none scored) */
  probe: number | null;
}

export function armFigures(run: ArmRun): ArmFigures {
  const agent = priceCalls(run.calls.filter((c) => run.agentCallIds.has(c.id)));
  const compaction = priceCalls(run.calls.filter((c) => !run.agentCallIds.has(c.id)));
  const scores = run.compactions.flatMap((c) => (c.probe?.score === null || c.probe === null ? [] : [c.probe.score]));
  return {
    agent,
    compaction,
    totalUsd: agent.usd + compaction.usd,
    waitMs: run.compactions.reduce((sum, c) => sum + c.waitMs, 0),
    longestWaitMs: Math.max(0, ...run.compactions.map((c) => c.waitMs)),
    probe: scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length,
  };
}

const s = (ms: number) => round(ms / 1000, 1);
const probeText = (event: CompactionEvent) =>
  event.probe?.score == null ? '—' : `${round(event.probe.score, 2)} (${event.probe.answered}/${event.probe.total})`;

export function costTable(sessions: readonly SessionRuns[]): Table {
  const rows: Table['rows'] = [];
  for (const session of sessions) {
    for (const run of session.runs) {
      if (run.status === 'not measured') {
        rows.push([session.session, run.arm.label, `not measured: ${run.reason ?? ''}`, '', '', '', '', '', '', '', '']);
        continue;
      }
      const f = armFigures(run);
      rows.push([
        session.session,
        run.arm.label,
        run.turns,
        run.compactions.length,
        round(f.agent.usd, 4),
        round(f.compaction.usd, 4),
        round(f.totalUsd, 4),
        round(cacheReadShare(f.agent.tokens), 3),
        s(f.waitMs),
        s(f.longestWaitMs),
        f.probe === null ? '—' : round(f.probe, 2),
      ]);
    }
  }
  return { title: COST_TABLE.title, columns: [...COST_TABLE.columns], rows };
}

export function tokenTable(sessions: readonly SessionRuns[]): Table {
  const rows: Table['rows'] = [];
  for (const session of sessions) {
    for (const run of session.runs.filter((r) => r.status === 'measured')) {
      const f = armFigures(run);
      const t = f.agent.tokens;
      const c = f.compaction.tokens;
      rows.push([
        session.session,
        run.arm.label,
        f.agent.calls,
        t.input,
        t.cacheRead,
        t.cacheWrite,
        t.output,
        f.compaction.calls,
        c.input,
        c.cacheRead,
        c.cacheWrite,
        c.output,
      ]);
    }
  }
  return {
    title: 'Tokens as the sim billed them: agent calls, then compaction calls',
    columns: [
      'session',
      'arm',
      'agent calls',
      'input (uncached)',
      'cache read',
      'cache write',
      'output',
      'compaction calls',
      'input (uncached)',
      'cache read',
      'cache write',
      'output',
    ],
    rows,
  };
}

export function compactionTable(sessions: readonly SessionRuns[]): Table {
  const rows: Table['rows'] = [];
  for (const session of sessions) {
    for (const run of session.runs) {
      for (const event of run.compactions) {
        rows.push([
          session.session,
          run.arm.label,
          event.kind,
          event.turn + 1,
          event.tokensAtStart,
          event.overWindow ? 'yes' : 'no',
          event.durationMs === null ? '—' : s(event.durationMs),
          s(event.waitMs),
          event.tokensAfter ?? '—',
          probeText(event),
          [event.status, event.decided].filter(Boolean).join(', '),
        ]);
      }
    }
  }
  return {
    title: 'Each compaction: when, how long, what the agent waited, what it continued from',
    columns: [
      'session',
      'arm',
      'kind',
      'before turn',
      'context tokens',
      'over the window',
      'compaction s',
      'agent wait s',
      'tokens after',
      'probe score (answered/total)',
      'status',
    ],
    rows,
  };
}

function runsOf(sessions: readonly SessionRuns[], key: ArmKey): ArmRun[] {
  return sessions.flatMap((session) => session.runs.filter((r) => r.arm.key === key && r.status === 'measured'));
}

/** Each measured arm's session costs, as figures (one value per session). */
export function costFigures(sessions: readonly SessionRuns[], result: ScenarioResult): void {
  const labels = [...new Set(sessions.flatMap((session) => session.runs.filter((r) => r.status === 'measured').map((r) => r.arm)))];
  for (const arm of labels)
    result.figures.push(
      figure(
        `${arm.label}: a session's total cost`,
        'USD',
        runsOf(sessions, arm.key).map((r) => round(armFigures(r).totalUsd, 4)),
      ),
    );
}

/**
 * The issue's targets for compactd's default policy (arm d) against the alternatives without
 * compactd: cost ≤ the cheapest, probe score ≥ the best, a wait over the window ≤ 0.25× the
 * single call's on the same session, and no wait at all when the compaction started under it.
 */
export function sessionTargets(sessions: readonly SessionRuns[]): Target[] {
  const auto = runsOf(sessions, 'auto');
  const alternatives = (['cut', 'single-call'] as const)
    .map((key) => ({ key, runs: runsOf(sessions, key) }))
    .filter((a) => a.runs.length > 0);
  if (auto.length === 0 || alternatives.length === 0) return [];
  const total = (runs: readonly ArmRun[]) => runs.reduce((sum, r) => sum + armFigures(r).totalUsd, 0);
  const meanProbe = (runs: readonly ArmRun[]) => {
    const scores = runs.flatMap((r) => r.compactions.flatMap((c) => (c.probe?.score == null ? [] : [c.probe.score])));
    return scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length;
  };
  const autoUsd = total(auto);
  const cheapest = alternatives.map((a) => ({ key: a.key, usd: total(a.runs) })).sort((a, b) => a.usd - b.usd)[0] as {
    key: string;
    usd: number;
  };
  const targets: Target[] = [];
  const cost = target(
    'compactd auto (default policy): sessions’ total cost / the cheapest alternative’s (no compaction, single call)',
    '<=',
    1,
    autoUsd / cheapest.usd,
    '×',
  );
  if (!cost.met) cost.bottleneck = costBottleneck(auto, alternatives.find((a) => a.key === cheapest.key)?.runs ?? [], cheapest.key);
  targets.push(cost);

  const autoProbe = meanProbe(auto);
  const bestProbe = Math.max(...alternatives.map((a) => meanProbe(a.runs) ?? 0));
  if (autoProbe !== null) {
    const probe = target('compactd auto: probe score minus the best alternative’s (mean over compactions)', '>=', 0, autoProbe - bestProbe);
    if (!probe.met)
      probe.bottleneck = `compactd auto answered ${round(autoProbe, 3)} of its probes on average, an alternative ${round(bestProbe, 3)}; the misses per compaction are in the compaction table (the clip-archive's budget bounds what it keeps)`;
    targets.push(probe);
  }

  const ratios: number[] = [];
  const backgroundWaits: number[] = [];
  for (const session of sessions) {
    const measured = (key: ArmKey) => session.runs.find((r) => r.arm.key === key && r.status === 'measured');
    const singleMs = measured('single-call')?.compactions.find((c) => c.kind === 'single-call')?.durationMs ?? null;
    for (const event of measured('auto')?.compactions ?? []) {
      if (event.overWindow && singleMs) ratios.push(event.waitMs / singleMs);
      if (!event.overWindow) backgroundWaits.push(event.waitMs);
    }
  }
  const waitRatio = target(
    'compactd auto: agent wait at a compaction over the window / the single call’s time on the same session (worst)',
    '<=',
    0.25,
    ratios.length === 0 ? 0 : Math.max(...ratios),
    '×',
  );
  if (!waitRatio.met)
    waitRatio.bottleneck =
      'the agent reached the window before the background compaction committed: the compaction table shows how far the context was from the window when it started and how long the job took';
  targets.push(waitRatio);
  targets.push(
    target(
      'compactd auto: agent wait at compactions started under the window (background)',
      '<=',
      0,
      backgroundWaits.length === 0 ? 0 : Math.max(...backgroundWaits) / 1000,
      's',
    ),
  );
  return targets;
}

/** Where compactd auto's money went against the cheapest alternative: each usage field's share of the difference. */
function costBottleneck(auto: readonly ArmRun[], cheapest: readonly ArmRun[], key: string): string {
  const parts = (runs: readonly ArmRun[]) => costByPart(runs.flatMap((r) => r.calls));
  const mine = parts(auto);
  const theirs = parts(cheapest);
  const names: Record<keyof typeof mine, string> = {
    input: 'uncached input',
    cacheRead: 'cache reads',
    cacheWrite: 'cache writes',
    output: 'output',
  };
  const deltas = (Object.keys(names) as Array<keyof typeof mine>)
    .map((field) => ({ field, usd: mine[field] - theirs[field] }))
    .sort((a, b) => b.usd - a.usd);
  const after = (runs: readonly ArmRun[]) => {
    const sizes = runs.flatMap((r) => r.compactions.flatMap((c) => (c.tokensAfter === null ? [] : [c.tokensAfter])));
    return sizes.length === 0 ? 0 : Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length);
  };
  return (
    `not CPU: the calls' prices. Against ${key}, compactd auto paid ${deltas.map((d) => `${d.usd >= 0 ? '+' : '−'}$${round(Math.abs(d.usd), 3)} for ${names[d.field]}`).join(', ')}. ` +
    `After a compaction the agent continued from ${after(auto)} tokens under compactd auto (recent messages kept verbatim up to the policy's targetRatio of the window) against ${after(cheapest)} under ${key}, and every later turn reads its context again`
  );
}
