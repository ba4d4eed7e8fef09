import { describe, expect, it } from 'vitest';

import { chunkBars } from '../../../../src/api/inspect/views/job.js';
import { gaugeSvg, timelineSvg } from '../../../../src/api/inspect/views/svg.js';
import type { ChunkRow } from '../../../../src/db/repos/chunks.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

function chunk(idx: number, finishedMs: number, latencyMs: number, extra: Partial<ChunkRow> = {}): ChunkRow {
  return {
    jobId: '00000000-0000-4000-8000-000000000000',
    idx,
    seqs: [idx * 10 + 1, idx * 10 + 2],
    level: 0,
    absorbedBatchIds: [],
    sourceTokens: 1000,
    messageTokens: 1000,
    outputBudget: 200,
    truncatedForPrompt: false,
    status: 'done',
    draft: null,
    draftUsage: null,
    summary: 's',
    providerItem: null,
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    usage: { inputTokens: 1000, outputTokens: 150, cacheReadTokens: 0, cacheWriteTokens: 0 },
    calls: 1,
    costUsd: 0.001,
    latencyMs,
    identifiers: [],
    identifiersFound: 0,
    ledger: null,
    fallback: null,
    updatedAt: at(finishedMs),
    ...extra,
  };
}

describe('chunkBars', () => {
  it('puts each call where it ran: it ended when its row was completed and started its latency earlier', () => {
    const bars = chunkBars([chunk(0, 1400, 400), chunk(1, 1500, 450)], at(5000));
    expect(bars.map((b) => [b.start.getTime() - at(0).getTime(), b.end.getTime() - at(0).getTime()])).toEqual([
      [1000, 1400],
      [1050, 1500],
    ]);
    expect(bars[0]?.detail).toContain('in 1000 / out 150');
  });
  it('a running call lasts until now; retries and a fallback are said', () => {
    const [running, retried] = chunkBars(
      [chunk(0, 1000, 0, { status: 'pending' }), chunk(1, 3000, 900, { calls: 3, fallback: 'local' })],
      at(2000),
    );
    expect(running?.end).toEqual(at(2000));
    expect(running?.detail).toMatch(/^running/);
    expect(retried?.detail).toContain('3 calls (2 retries or repairs)');
    expect(retried?.kind).toBe('fallback');
  });
});

describe('timelineSvg', () => {
  it('draws one bar per call on a shared time axis, so overlapping calls overlap', () => {
    const bars = chunkBars([chunk(0, 1400, 400), chunk(1, 1500, 450)], at(5000));
    const svg = timelineSvg({ bars, marks: [{ label: 'commit', at: at(1600) }], start: at(0), end: at(2000) }).value;
    const rects = [...svg.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => [
      Number(m[1]),
      Number(m[1]) + Number(m[2]),
    ]);
    expect(rects).toHaveLength(2);
    const [a, b] = rects as [[number, number], [number, number]];
    expect(a[0] < b[1] && b[0] < a[1]).toBe(true);
    expect(svg).toContain('>commit</text>');
  });
  it('escapes labels', () => {
    const svg = timelineSvg({ bars: [], marks: [{ label: '<script>', at: at(0) }], start: at(0), end: at(1) }).value;
    expect(svg).not.toContain('<script>');
  });
});

describe('gaugeSvg', () => {
  it('draws a drop for each compaction and links it to its job', () => {
    const svg = gaugeSvg({
      compactions: [{ at: at(1000), before: 90_000, after: 10_000, href: '/inspect/jobs/j1', label: 'auto compaction' }],
      now: { at: at(2000), tokens: 20_000 },
      limit: 100_000,
      start: at(0),
    }).value;
    expect(svg).toContain('href="/inspect/jobs/j1"');
    expect(svg).toContain('90,000 → 10,000 tokens');
    const points = /points="([^"]+)"/.exec(svg)?.[1]?.split(' ');
    expect(points).toHaveLength(4);
    // the drop is vertical: before and after share their x
    expect(points?.[1]?.split(',')[0]).toBe(points?.[2]?.split(',')[0]);
  });
});
