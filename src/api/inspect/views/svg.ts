import { type Html, html } from '../html.js';
import { counted, fmt } from './layout.js';

/** The two pictures of the inspector, drawn as SVG on the server (no script, no canvas). */

const clock = (d: Date) => d.toISOString().slice(11, 23);

export interface GaugeCompaction {
  at: Date;
  before: number;
  after: number;
  href: string;
  label: string;
}

/**
 * Tokens in the context over time against the window: a line through each compaction's
 * before → after drop and the current count, each compaction a marked, linked drop.
 */
export function gaugeSvg(input: {
  compactions: readonly GaugeCompaction[];
  now: { at: Date; tokens: number };
  limit: number;
  start: Date;
}): Html {
  const width = 720;
  const height = 200;
  const pad = { left: 56, right: 12, top: 12, bottom: 28 };
  const t0 = input.start.getTime();
  const t1 = Math.max(input.now.at.getTime(), t0 + 1);
  const top = Math.max(input.limit, input.now.tokens, ...input.compactions.map((c) => c.before)) * 1.05;
  const x = (d: Date) => pad.left + ((d.getTime() - t0) / (t1 - t0)) * (width - pad.left - pad.right);
  const y = (tokens: number) => pad.top + (1 - tokens / top) * (height - pad.top - pad.bottom);
  const points: string[] = [`${x(input.start).toFixed(1)},${y(0).toFixed(1)}`];
  for (const c of input.compactions)
    points.push(`${x(c.at).toFixed(1)},${y(c.before).toFixed(1)}`, `${x(c.at).toFixed(1)},${y(c.after).toFixed(1)}`);
  points.push(`${x(input.now.at).toFixed(1)},${y(input.now.tokens).toFixed(1)}`);
  const limitY = y(input.limit).toFixed(1);
  return html`<svg class="gauge" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="gauge-title">
<title id="gauge-title">Context tokens over time: ${fmt(input.now.tokens)} of ${fmt(input.limit)} now, ${counted(input.compactions.length, 'compaction')}</title>
<line class="axis" x1="${pad.left}" y1="${y(0).toFixed(1)}" x2="${width - pad.right}" y2="${y(0).toFixed(1)}"></line>
<line class="limit" x1="${pad.left}" y1="${limitY}" x2="${width - pad.right}" y2="${limitY}"></line>
<text class="label" x="4" y="${limitY}">window</text>
<text class="label" x="4" y="${y(0).toFixed(1)}">0</text>
<text class="label" x="4" y="${(Number(limitY) + 14).toFixed(1)}">${fmt(input.limit)}</text>
<polyline class="tokens" points="${points.join(' ')}"></polyline>
${input.compactions.map(
  (
    c,
  ) => html`<a href="${c.href}" class="compaction-mark"><title>${c.label}: ${fmt(c.before)} → ${fmt(c.after)} tokens at ${c.at.toISOString()}</title>
<line x1="${x(c.at).toFixed(1)}" y1="${pad.top}" x2="${x(c.at).toFixed(1)}" y2="${y(0).toFixed(1)}"></line>
<circle cx="${x(c.at).toFixed(1)}" cy="${y(c.after).toFixed(1)}" r="4"></circle></a>`,
)}
<text class="label" x="${pad.left}" y="${height - 8}">${input.start.toISOString().slice(0, 19).replace('T', ' ')}</text>
<text class="label end" x="${width - pad.right}" y="${height - 8}">now</text>
</svg>`;
}

export interface TimelineBar {
  label: string;
  start: Date;
  end: Date;
  /** a second line of the bar's tooltip: tokens, model, retries, fallback */
  detail: string;
  kind: 'call' | 'fallback';
}

export interface TimelineMark {
  label: string;
  at: Date;
}

/** The job on one time axis: a row per LLM call (overlapping bars ran side by side) and the plan/commit marks. */
export function timelineSvg(input: { bars: readonly TimelineBar[]; marks: readonly TimelineMark[]; start: Date; end: Date }): Html {
  const width = 720;
  const row = 22;
  const pad = { left: 120, right: 16, top: 30, bottom: 24 };
  const height = pad.top + Math.max(1, input.bars.length) * row + pad.bottom;
  const t0 = input.start.getTime();
  const t1 = Math.max(input.end.getTime(), t0 + 1);
  const x = (d: Date) => pad.left + ((Math.min(Math.max(d.getTime(), t0), t1) - t0) / (t1 - t0)) * (width - pad.left - pad.right);
  return html`<svg class="timeline" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="timeline-title">
<title id="timeline-title">Job timeline: ${input.bars.length} LLM calls between ${clock(input.start)} and ${clock(input.end)} (UTC)</title>
${input.marks.map((m, i) => {
  // labels alternate between two lines so marks close in time stay readable; late ones end at their line
  const mx = x(m.at);
  return html`<g class="mark"><line x1="${mx.toFixed(1)}" y1="${i % 2 === 0 ? 12 : 24}" x2="${mx.toFixed(1)}" y2="${height - pad.bottom}"></line>
<text class="label${mx > width * 0.8 ? ' end' : ''}" x="${mx.toFixed(1)}" y="${i % 2 === 0 ? 10 : 22}">${m.label}</text><title>${m.label} at ${m.at.toISOString()}</title></g>`;
})}
${input.bars.map((bar, i) => {
  const left = x(bar.start);
  const barWidth = Math.max(2, x(bar.end) - left);
  const top = pad.top + i * row;
  return html`<g class="bar ${bar.kind}" data-start="${bar.start.getTime()}" data-end="${bar.end.getTime()}">
<text class="label" x="4" y="${top + 15}">${bar.label}</text>
<rect x="${left.toFixed(1)}" y="${top + 3}" width="${barWidth.toFixed(1)}" height="${row - 6}" rx="3"></rect>
<title>${bar.label}: ${clock(bar.start)} → ${clock(bar.end)} (${bar.end.getTime() - bar.start.getTime()} ms). ${bar.detail}</title></g>`;
})}
<text class="label" x="${pad.left}" y="${height - 6}">${clock(input.start)}</text>
<text class="label end" x="${width - pad.right}" y="${height - 6}">${clock(input.end)} (${t1 - t0} ms)</text>
</svg>`;
}
