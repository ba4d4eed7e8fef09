import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { outputTail } from '../../../harness/compactd-process.js';

describe("a process's output tail", () => {
  it('reads as the last `limit` characters of everything pushed', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 60 }), fc.integer({ min: 1, max: 200 }), (chunks, limit) => {
        const tail = outputTail(limit);
        chunks.forEach((chunk) => tail.push(chunk));
        expect(tail.text()).toBe(chunks.join('').slice(-limit));
      }),
    );
  });

  it('holds a bounded amount however much a long-running process writes', () => {
    const tail = outputTail(1_000);
    const line = 'x'.repeat(99) + '\n';
    for (let i = 0; i < 100_000; i++) tail.push(line);
    // whole chunks are dropped once the rest covers the limit: at most one chunk beyond it
    expect(tail.held()).toBeLessThanOrEqual(1_000 + line.length);
    expect(tail.text()).toBe(line.repeat(10));
  });
});
