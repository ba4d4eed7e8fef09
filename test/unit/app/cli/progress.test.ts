import { describe, expect, it } from 'vitest';

import { createProgress, formatCounts, formatDuration, renderBar } from '../../../../src/app/cli/progress.js';

function capture(tty: boolean, columns?: number) {
  let text = '';
  let clock = 0;
  const stream = { write: (chunk: string) => (text += chunk), isTTY: tty, columns };
  return { stream, text: () => text, tick: (ms: number) => (clock += ms), now: () => clock };
}

describe('progress', () => {
  it.each([
    [0, 10, '[░░░░░░░░░░]'],
    [5, 10, '[█████░░░░░]'],
    [10, 10, '[██████████]'],
    [12, 10, '[██████████]'],
    [3, 0, '[░░░░░░░░░░]'],
  ])('renders %i/%i as %s', (done, total, bar) => {
    expect(renderBar(done, total, 10)).toBe(bar);
  });

  it('formats counts and durations', () => {
    expect(formatCounts(1234, 5000, 'messages')).toBe('1,234/5,000 messages (24%)');
    expect(formatCounts(3, 0, 'chunks')).toBe('');
    expect(formatDuration(420)).toBe('420 ms');
    expect(formatDuration(1_250)).toBe('1.3 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
  });

  it('degrades to one plain line per tenth, per note change and at the end when not a terminal', () => {
    const out = capture(false);
    const progress = createProgress({ label: 'appending', unit: 'messages', stream: out.stream, now: out.now });
    for (let done = 0; done <= 100; done += 1) progress.update(done, 100);
    progress.update(100, 100, 'committing');
    out.tick(1500);
    progress.finish('done');
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(11 + 1 + 1);
    expect(lines[0]).toBe('appending 0/100 messages (0%)');
    expect(lines[10]).toBe('appending 100/100 messages (100%)');
    expect(lines[11]).toBe('appending 100/100 messages (100%) · committing');
    expect(lines[12]).toBe('appending done (1.5 s)');
    expect(out.text()).not.toMatch(/[\r\x1b]/);
  });

  it('redraws one line in place on a terminal, throttled, cut to its width', () => {
    const out = capture(true, 70);
    const progress = createProgress({ label: 'compacting', unit: 'chunks', stream: out.stream, now: out.now });
    progress.update(1, 8, 'x'.repeat(100));
    progress.update(2, 8, 'x'.repeat(100));
    out.tick(100);
    progress.update(3, 8, 'summarizing');
    progress.finish('completed');
    const frames = out
      .text()
      .split('\r\x1b[2K')
      .filter((f) => f !== '');
    expect(frames).toHaveLength(3);
    expect(frames.every((f) => f.replace('\n', '').length <= 69)).toBe(true);
    expect(frames[0]).toMatch(/x…$/);
    expect(frames[1]).toMatch(/^compacting \[█{9}░{15}\] 3\/8 chunks \(37%\) · summarizing$/);
    expect(frames[2]).toBe('compacting completed (100 ms)\n');
  });
});
