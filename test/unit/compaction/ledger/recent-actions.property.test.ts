import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { extractLedger, mergeAllLedgers, renderLedger } from '../../../../src/compaction/ledger/index.js';
import { countTokens } from '../../../fixtures/builders.js';
import { cutSession, sessionSteps, type Step, stepMessages } from './arbitraries.js';

/**
 * The state's recent actions against the generator's own record of what ran: at most N
 * distinct commands, the ones run last, newest last, each with the outcome its tool result
 * gave (`ok`, or the exit code and the error line); and under any budget they are the last
 * part to give way, oldest first.
 */

const RUNS = { numRuns: 300 };
const HEADING = 'Recent actions (newest last):';

interface Run {
  command: string;
  exit: number;
  error: string;
  seq: number;
}

/** Every command run of a session, in order, as the generator made them. */
function runsOf(steps: readonly Step[]): Run[] {
  const messages = stepMessages(steps);
  return steps.flatMap((step, i) => {
    if (step.t !== 'command' && step.t !== 'fenced') return [];
    return [{ command: step.command, exit: step.exit, error: step.error, seq: messages[i]![0]!.seq }];
  });
}

/** The last run of each of the `n` commands run last, newest last. */
function lastDistinct(runs: readonly Run[], n: number): Run[] {
  const out: Run[] = [];
  for (let i = runs.length - 1; i >= 0 && out.length < n; i -= 1) {
    if (!out.some((r) => r.command === runs[i]!.command)) out.unshift(runs[i]!);
  }
  return out;
}

const expectedLine = (run: Run) => `- \`${run.command}\` → ${run.exit === 0 ? 'ok' : `exit ${run.exit}: ${run.error}`} (seq ${run.seq})`;

/** The item lines of the recent-actions part of a rendered ledger. */
function recentLines(text: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(HEADING);
  if (start === -1) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('- ')) break;
    out.push(line);
  }
  return out;
}

/** Heading lines of every other part (a part's items and its "more" line are not headings). */
function otherHeadings(text: string): string[] {
  return text
    .split('\n')
    .filter(
      (l) => l.length > 0 && !l.startsWith('- ') && !l.startsWith('(+') && !l.startsWith(HEADING) && !l.startsWith('Files touched last:'),
    );
}

describe('the recent actions of the state', () => {
  it('are the N distinct commands run last, newest last, each with the outcome of its latest run', () => {
    fc.assert(
      fc.property(sessionSteps, fc.integer({ min: 1, max: 8 }), (steps, n) => {
        const text = renderLedger(extractLedger(stepMessages(steps).flat()), {
          maxTokens: 100_000,
          countTokens,
          caps: { recentCommands: n },
        });
        const expected = lastDistinct(runsOf(steps), n);
        expect(recentLines(text)).toEqual(expected.map(expectedLine));
        expect(new Set(recentLines(text)).size).toBe(recentLines(text).length);
      }),
      RUNS,
    );
  });

  it('say the same whether the span was one batch or several merged', () => {
    fc.assert(
      fc.property(cutSession, ({ steps, cuts }) => {
        const perStep = stepMessages(steps);
        const [i, j] = cuts;
        const parts = [perStep.slice(0, i).flat(), perStep.slice(i, j).flat(), perStep.slice(j).flat()];
        const options = { maxTokens: 100_000, countTokens };
        expect(recentLines(renderLedger(mergeAllLedgers(parts.map(extractLedger)), options))).toEqual(
          recentLines(renderLedger(extractLedger(parts.flat()), options)),
        );
      }),
      RUNS,
    );
  });

  it('give way last under any budget, oldest first, and only once every other part is gone', () => {
    fc.assert(
      fc.property(sessionSteps, fc.integer({ min: 0, max: 400 }), (steps, maxTokens) => {
        const text = renderLedger(extractLedger(stepMessages(steps).flat()), { maxTokens, countTokens });
        expect(countTokens(text)).toBeLessThanOrEqual(maxTokens);
        const expected = lastDistinct(runsOf(steps), 5).map(expectedLine);
        const shown = recentLines(text);
        // the newest stay: what is shown is the end of the full list
        expect(shown).toEqual(expected.slice(expected.length - shown.length));
        if (shown.length < expected.length) expect(otherHeadings(text)).toEqual([]);
      }),
      RUNS,
    );
  });
});
