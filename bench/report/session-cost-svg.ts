import type { ScenarioResult, Table } from '../lib/result.js';

/**
 * The plot of the "a session's cost" scenario, as a hand-written SVG like the latency chart:
 * per session, one bar per arm for the session's total cost (agent and compaction calls),
 * with the arm's continuation-probe score above its bar. Drawn from the scenario's cost
 * table, whose title and columns are fixed here.
 */

export const SESSION_COST_ID = 'session-cost';

export const COST_TABLE = {
  title: 'A session’s cost per arm (agent calls + compaction calls, at the registry’s list prices)',
  columns: [
    'session',
    'arm',
    'agent turns',
    'compactions',
    'agent calls $',
    'compaction calls $',
    'total $',
    'cache read / input',
    'agent wait s',
    'longest wait s',
    'probe score',
  ],
} as const;

const WIDTH = 860;
const HEIGHT = 440;
const MARGIN = { left: 70, right: 250, top: 48, bottom: 60 };
/** by the arm's letter (a–e), so an arm keeps its colour when another is not measured */
const COLOURS = ['#7f7f7f', '#1f77b4', '#17becf', '#2ca02c', '#d62728'];
const colourOf = (arm: string) => COLOURS[Math.max(0, 'abcde'.indexOf(arm.charAt(0)))] ?? '#7f7f7f';

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

interface Bar {
  session: string;
  arm: string;
  usd: number;
  probe: string;
}

/** The bars of a cost table: measured rows only (a "not measured" arm has no number). */
export function costBars(table: Table): Bar[] {
  const col = (name: (typeof COST_TABLE.columns)[number]) => COST_TABLE.columns.indexOf(name);
  return table.rows
    .filter((row) => typeof row[col('total $')] === 'number')
    .map((row) => ({
      session: String(row[col('session')]),
      arm: String(row[col('arm')]),
      usd: row[col('total $')] as number,
      probe: String(row[col('probe score')]),
    }));
}

/** The chart, or null when the scenario measured nothing to draw. */
export function renderSessionCostChart(scenario: ScenarioResult | undefined, subtitle: string): string | null {
  const table = scenario?.status === 'measured' ? scenario.tables.find((t) => t.title === COST_TABLE.title) : undefined;
  const bars = table ? costBars(table) : [];
  if (bars.length === 0) return null;
  const sessions = [...new Set(bars.map((b) => b.session))];
  const arms = [...new Set(bars.map((b) => b.arm))];
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const yMax = niceMax(Math.max(...bars.map((b) => b.usd)));
  const y = (usd: number) => MARGIN.top + plotH - (usd / yMax) * plotH;
  const groupW = plotW / sessions.length;
  const barW = Math.min(36, (groupW * 0.8) / arms.length);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${MARGIN.left}" y="20" font-size="15" font-weight="bold">A session’s cost per arm (USD), probe score above each bar</text>`,
    `<text x="${MARGIN.left}" y="36" fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  for (let i = 0; i <= 5; i += 1) {
    const value = (yMax / 5) * i;
    out.push(
      `<line x1="${MARGIN.left}" y1="${y(value).toFixed(1)}" x2="${MARGIN.left + plotW}" y2="${y(value).toFixed(1)}" stroke="#eee"/>`,
    );
    out.push(`<text x="${MARGIN.left - 8}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${value.toFixed(2)}</text>`);
  }
  out.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(
    `<text x="18" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${MARGIN.top + plotH / 2})">total cost (USD)</text>`,
  );
  sessions.forEach((session, s) => {
    const groupX = MARGIN.left + s * groupW + (groupW - barW * arms.length) / 2;
    out.push(
      `<text x="${(MARGIN.left + (s + 0.5) * groupW).toFixed(1)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${escapeXml(session)}</text>`,
    );
    arms.forEach((arm, a) => {
      const bar = bars.find((b) => b.session === session && b.arm === arm);
      if (!bar) return;
      const x = groupX + a * barW;
      const top = y(bar.usd);
      out.push(
        `<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(MARGIN.top + plotH - top).toFixed(1)}" fill="${colourOf(arm)}"><title>${escapeXml(`${arm}, ${session}: $${bar.usd.toFixed(3)}, probe score ${bar.probe}`)}</title></rect>`,
      );
      out.push(
        `<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(top - 4).toFixed(1)}" text-anchor="middle" font-size="9">${escapeXml(bar.probe)}</text>`,
      );
    });
  });
  out.push(
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 16}" text-anchor="middle">session (each replayed whole, one agent call per assistant turn)</text>`,
  );
  arms.forEach((arm, a) => {
    const ly = MARGIN.top + 10 + a * 20;
    out.push(
      `<rect x="${MARGIN.left + plotW + 14}" y="${ly - 8}" width="12" height="12" fill="${colourOf(arm)}"/><text x="${MARGIN.left + plotW + 32}" y="${ly + 2}">${escapeXml(arm)}</text>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
