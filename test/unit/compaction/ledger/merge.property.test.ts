import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  emptyLedger,
  extractLedger,
  LedgerSchema,
  mergeAllLedgers,
  mergeLedgers,
  SENTENCES_KEPT,
} from '../../../../src/compaction/ledger/index.js';
import { cutSession, sessionSteps, type Step, stepMessages } from './arbitraries.js';

/**
 * The ledger merges exactly: a session cut anywhere between tool exchanges gives ledgers
 * whose merge is the whole session's ledger (files, commands, errors and their resolution,
 * instructions, tasks), and merging is associative whatever order the parts come in.
 */

const RUNS = { numRuns: 300 };

function parts(steps: Parameters<typeof stepMessages>[0], cuts: readonly [number, number]) {
  const perStep = stepMessages(steps);
  const [i, j] = cuts;
  return [perStep.slice(0, i).flat(), perStep.slice(i, j).flat(), perStep.slice(j).flat()];
}

describe('mergeLedgers', () => {
  it('extractLedger(a ++ b) equals mergeLedgers(extractLedger(a), extractLedger(b))', () => {
    fc.assert(
      fc.property(cutSession, ({ steps, cuts }) => {
        const [a, b, c] = parts(steps, cuts);
        const whole = extractLedger([...a!, ...b!, ...c!]);
        expect(mergeLedgers(extractLedger(a!), extractLedger([...b!, ...c!]))).toEqual(whole);
        expect(mergeAllLedgers([extractLedger(a!), extractLedger(b!), extractLedger(c!)])).toEqual(whole);
      }),
      RUNS,
    );
  });

  it('is associative, in any order of the parts', () => {
    fc.assert(
      fc.property(cutSession, fc.constantFrom([0, 1, 2], [2, 1, 0], [1, 0, 2], [2, 0, 1]), ({ steps, cuts }, order) => {
        const ledgers = parts(steps, cuts).map(extractLedger);
        const [x, y, z] = order.map((k) => ledgers[k]!);
        expect(mergeLedgers(mergeLedgers(x!, y!), z!)).toEqual(mergeLedgers(x!, mergeLedgers(y!, z!)));
      }),
      RUNS,
    );
  });

  it('has the empty ledger as identity, and a ledger merged with itself doubles its counts only', () => {
    fc.assert(
      fc.property(sessionSteps, (steps) => {
        const ledger = extractLedger(stepMessages(steps).flat());
        expect(mergeLedgers(emptyLedger(), ledger)).toEqual(ledger);
        expect(mergeLedgers(ledger, emptyLedger())).toEqual(ledger);
        const twice = mergeLedgers(ledger, ledger);
        expect(twice.files.map((f) => f.path)).toEqual(ledger.files.map((f) => f.path));
        expect(twice.commands.map((c) => c.count)).toEqual(ledger.commands.map((c) => c.count * 2));
        expect(twice.errors).toEqual(ledger.errors);
      }),
      RUNS,
    );
  });

  it('survives storage: a ledger through JSON and LedgerSchema.parse is the same ledger', () => {
    fc.assert(
      fc.property(sessionSteps, (steps) => {
        const ledger = extractLedger(stepMessages(steps).flat());
        expect(LedgerSchema.parse(JSON.parse(JSON.stringify(ledger)))).toEqual(ledger);
      }),
      RUNS,
    );
  });

  it('orders the sentences of one message as said, however the parts were cut (a case fast-check found)', () => {
    const steps: Step[] = [
      { t: 'user', sentences: ['It must never touch the network.', "Don't rename public functions.", 'Make sure the tests pass.'] },
      { t: 'user', sentences: ['It must never touch the network.', 'Make sure the tests pass.'] },
      { t: 'assistant' },
      { t: 'user', sentences: ['Make sure the tests pass.', "Don't rename public functions."] },
    ];
    const [a, b, c] = parts(steps, [0, 2]);
    const whole = extractLedger([...a!, ...b!, ...c!]);
    expect(whole.instructions.constraints.map((s) => s.text).slice(-2)).toEqual([
      'Make sure the tests pass.',
      "Don't rename public functions.",
    ]);
    expect(mergeAllLedgers([a!, b!, c!].map(extractLedger))).toEqual(whole);
  });

  it('resolves an older open error when the newer ledger holds a later success', () => {
    const [older, newer] = stepMessages([
      { t: 'command', tool: 'Bash', command: 'npm test', exit: 1, error: 'Error: expected 2, got 3' },
      { t: 'command', tool: 'Bash', command: 'npm test', exit: 0, error: '' },
    ]);
    const before = extractLedger(older!);
    expect(before.errors.map((e) => e.resolved)).toEqual([false]);
    expect(mergeLedgers(before, extractLedger(newer!)).errors.map((e) => e.resolved)).toEqual([true]);
    // the same error again after the fix is open again, whole or merged
    const fail = { t: 'command', tool: 'Bash', command: 'npm test', exit: 1, error: 'Error: expected 2, got 3' } as const;
    const [first, fix, again] = stepMessages([fail, { ...fail, exit: 0 }, fail]);
    expect(extractLedger([...first!, ...fix!, ...again!]).errors.map((e) => e.resolved)).toEqual([false]);
    expect(mergeLedgers(extractLedger([...first!, ...fix!]), extractLedger(again!)).errors.map((e) => e.resolved)).toEqual([false]);
    // a success older than the error resolves nothing
    expect(mergeLedgers(extractLedger(newer!.map((m) => ({ ...m, seq: m.seq - 10 }))), before).errors.map((e) => e.resolved)).toEqual([
      false,
    ]);
  });
});

describe('the generated sessions', () => {
  it('cover what the properties are about: repeated files, moves, deletions, open and resolved errors, todo lists, fenced agents', () => {
    const ledgers = fc.sample(sessionSteps, { numRuns: 300, seed: 7 }).map((steps) => extractLedger(stepMessages(steps).flat()));
    const some = (predicate: (l: (typeof ledgers)[number]) => boolean) => ledgers.some(predicate);
    expect(some((l) => l.files.some((f) => (f.actions.edited ?? 0) > 1 && f.actions.read !== undefined))).toBe(true);
    expect(some((l) => l.files.some((f) => f.movedTo !== undefined))).toBe(true);
    expect(some((l) => l.files.some((f) => f.lastChange === 'deleted'))).toBe(true);
    expect(some((l) => l.errors.some((e) => e.resolved && e.targetKind === 'command'))).toBe(true);
    expect(some((l) => l.errors.some((e) => e.resolved && e.targetKind === 'path'))).toBe(true);
    expect(some((l) => l.errors.some((e) => !e.resolved))).toBe(true);
    expect(some((l) => l.tasks !== null && l.tasks.items.length > 0)).toBe(true);
    expect(some((l) => l.commands.some((c) => c.outcome === 'failed' && c.lastOkSeq !== undefined))).toBe(true);
    expect(some((l) => l.instructions.constraints.length > 0 && l.commands.some((c) => c.count > 2))).toBe(true);
  });
});

describe('a long conversation’s sentences', () => {
  // user turns with distinct requests and constraints, some said again later, more than the ledger keeps
  const longTalk = fc
    .array(fc.integer({ min: 0, max: 180 }), { minLength: SENTENCES_KEPT - 10, maxLength: SENTENCES_KEPT * 3 })
    .chain((topics) =>
      fc.record({
        steps: fc.constant(
          topics.map((k): Step => ({ t: 'user', sentences: [`Please look at ticket ${k}.`, `It must never drop row ${k}.`] })),
        ),
        cuts: fc.tuple(fc.nat(topics.length), fc.nat(topics.length)).map(([x, y]) => [Math.min(x, y), Math.max(x, y)] as const),
      }),
    );

  it('keeps the newest SENTENCES_KEPT of each kind, the same whole or merged from parts in any grouping', () => {
    fc.assert(
      fc.property(longTalk, ({ steps, cuts }) => {
        const [a, b, c] = parts(steps, cuts);
        const whole = extractLedger([...a!, ...b!, ...c!]);
        const [x, y, z] = [a!, b!, c!].map(extractLedger);
        expect(mergeAllLedgers([x!, y!, z!])).toEqual(whole);
        expect(mergeLedgers(x!, mergeLedgers(y!, z!))).toEqual(whole);

        // the newest distinct sayings, by where each was last said
        const lastSaid = new Map<string, number>();
        for (const message of [...a!, ...b!, ...c!]) {
          const text = (message.content[0] as { text: string }).text;
          lastSaid.set(text.split(' It')[0]!, message.seq);
        }
        const newest = [...lastSaid].sort((p, q) => p[1] - q[1]).slice(-SENTENCES_KEPT);
        expect(whole.instructions.requests.map((s) => [s.text, s.seq])).toEqual(newest);
        expect(whole.instructions.constraints).toHaveLength(Math.min(SENTENCES_KEPT, lastSaid.size));
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });
});
