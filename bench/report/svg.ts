import type { ChartPoint } from '../lib/context.js';

/**
 * Latency vs conversation size per strategy, as a hand-written SVG (no chart package): a
 * log-free scatter with one colour per strategy, points joined in size order, failed
 * requests drawn as crosses on the x axis' row of their size.
 */

const WIDTH = 800;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 230, top: 40, bottom: 60 };
const COLOURS: Record<string, string> = {
  compactd: '#1f77b4',
  'compactd, identifier check off': '#9467bd',
  'sequential fold': '#d62728',
  'LangChain middleware': '#2ca02c',
};

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function renderLatencyChart(points: readonly ChartPoint[], subtitle: string): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const xMax = niceMax(Math.max(1, ...points.map((p) => p.tokens)));
  const yMax = niceMax(Math.max(1, ...points.filter((p) => p.ok).map((p) => p.seconds)));
  const x = (tokens: number) => MARGIN.left + (tokens / xMax) * plotW;
  const y = (seconds: number) => MARGIN.top + plotH - (seconds / yMax) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${MARGIN.left}" y="20" font-size="15" font-weight="bold">Compaction wall time vs tokens compacted</text>`,
    `<text x="${MARGIN.left}" y="34" fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  for (let i = 0; i <= 5; i += 1) {
    const tx = (xMax / 5) * i;
    const ty = (yMax / 5) * i;
    out.push(`<line x1="${x(tx)}" y1="${MARGIN.top}" x2="${x(tx)}" y2="${MARGIN.top + plotH}" stroke="#eee"/>`);
    out.push(`<text x="${x(tx)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${Math.round(tx / 1000)}k</text>`);
    out.push(`<line x1="${MARGIN.left}" y1="${y(ty)}" x2="${MARGIN.left + plotW}" y2="${y(ty)}" stroke="#eee"/>`);
    out.push(`<text x="${MARGIN.left - 8}" y="${y(ty) + 4}" text-anchor="end">${Number.isInteger(ty) ? ty : ty.toFixed(1)}</text>`);
  }
  out.push(`<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 20}" text-anchor="middle">tokens compacted (source messages)</text>`);
  out.push(
    `<text x="18" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${MARGIN.top + plotH / 2})">wall time (s)</text>`,
  );
  const strategies = [...new Set(points.map((p) => p.strategy))];
  strategies.forEach((strategy, i) => {
    const colour = COLOURS[strategy] ?? '#7f7f7f';
    const series = points.filter((p) => p.strategy === strategy).sort((a, b) => a.tokens - b.tokens);
    const ok = series.filter((p) => p.ok);
    if (ok.length > 1)
      out.push(
        `<polyline fill="none" stroke="${colour}" stroke-width="1.5" points="${ok.map((p) => `${x(p.tokens).toFixed(1)},${y(p.seconds).toFixed(1)}`).join(' ')}"/>`,
      );
    for (const p of series) {
      const cx = x(p.tokens).toFixed(1);
      if (p.ok)
        out.push(
          `<circle cx="${cx}" cy="${y(p.seconds).toFixed(1)}" r="4" fill="${colour}"><title>${escapeXml(`${strategy} ${p.label}: ${p.seconds.toFixed(1)} s, ${p.tokens} tokens`)}</title></circle>`,
        );
      else {
        const cy = MARGIN.top + plotH - 6;
        out.push(
          `<path d="M${Number(cx) - 5},${cy - 5} L${Number(cx) + 5},${cy + 5} M${Number(cx) - 5},${cy + 5} L${Number(cx) + 5},${cy - 5}" stroke="${colour}" stroke-width="2"><title>${escapeXml(`${strategy} ${p.label}: no summary (the request failed)`)}</title></path>`,
        );
      }
    }
    const ly = MARGIN.top + 10 + i * 20;
    out.push(
      `<circle cx="${MARGIN.left + plotW + 20}" cy="${ly}" r="4" fill="${colour}"/><text x="${MARGIN.left + plotW + 30}" y="${ly + 4}">${escapeXml(strategy)}</text>`,
    );
  });
  const ly = MARGIN.top + 10 + strategies.length * 20;
  out.push(`<text x="${MARGIN.left + plotW + 14}" y="${ly + 4}" fill="#555">× = request failed</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
