import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { extractLedger, type Ledger } from '../../../src/compaction/ledger/index.js';
import { DEFAULT_POLICY } from '../../../src/config/policy.js';
import { clipState, mergedLedger, type StatefulBatch } from '../../../src/worker/commit-parts.js';
import { conversation } from '../../fixtures/builders.js';

/** The state of the work a commit puts at the head of the clip-archive (SPEC §5.7 (1)). */

const older = conversation(1)
  .user('Make the registry tests pass. Never touch mix.lock.')
  .exchange('e1', 'Edit', { file_path: '/repo/lib/app/registry.ex', old_string: 'a', new_string: 'bb' }, 'The file has been updated.')
  .exchange('b1', 'Bash', { command: 'mix test' }, '** (KeyError) key :pane_id not found\nExit code 1', true)
  .build();
const newer = conversation(10)
  .exchange('e2', 'Edit', { file_path: '/repo/lib/app/registry.ex', old_string: 'b', new_string: 'c' }, 'The file has been updated.')
  .exchange('e3', 'Write', { file_path: '/repo/test/app/registry_test.exs', content: 'x' }, 'File created successfully')
  .exchange('b2', 'Bash', { command: 'mix test' }, '12 tests, 0 failures')
  .build();

const batch = (id: string, seqs: number[], ledger: Ledger | null): StatefulBatch => ({ id, level: 0, summary: 's', seqs, ledger });

describe('clipState', () => {
  const live = [batch('b2', [10, 11, 12, 13, 14, 15], extractLedger(newer)), batch('b1', [1, 2, 3, 4, 5], extractLedger(older))];

  it('merges the live ledgers oldest coverage first, so a later success resolves an earlier error', () => {
    const merged = mergedLedger(live);
    expect(merged?.errors.every((e) => e.resolved)).toBe(true);
    expect(merged?.files.map((f) => f.path).sort()).toEqual(['/repo/lib/app/registry.ex', '/repo/test/app/registry_test.exs']);
  });

  it('renders paths relative to the directory the changed files share, within ledgerMaxTokens', () => {
    const state = clipState(live, DEFAULT_POLICY, countTokens);
    expect(state.cwd).toBe('/repo');
    expect(state.text.startsWith('State of the work (paths relative to /repo):')).toBe(true);
    expect(state.text).toContain('lib/app/registry.ex');
    expect(state.text).toContain('Never touch mix.lock.');
    expect(countTokens(state.text)).toBeLessThanOrEqual(DEFAULT_POLICY.ledgerMaxTokens);
    const tight = clipState(live, { ledgerMaxTokens: 40 }, countTokens);
    expect(countTokens(tight.text)).toBeLessThanOrEqual(40);
  });

  it('shows as many recent commands as policy.ledgerRecentCommands says', () => {
    const recent = (text: string) =>
      text
        .split('Recent actions (newest last):\n')[1]
        ?.split('\n')
        .filter((l) => l.startsWith('- ')) ?? [];
    expect(recent(clipState(live, DEFAULT_POLICY, countTokens).text)).toHaveLength(1);
    const many = batch(
      'b3',
      [20, 21, 22, 23, 24, 25, 26, 27],
      extractLedger(
        conversation(20)
          .exchange('c1', 'Bash', { command: 'git status' }, 'clean')
          .exchange('c2', 'Bash', { command: 'git diff' }, '')
          .exchange('c3', 'Bash', { command: 'mix format' }, '')
          .exchange('c4', 'Bash', { command: 'mix compile' }, 'ok')
          .build(),
      ),
    );
    const withMany = [many, ...live];
    expect(recent(clipState(withMany, DEFAULT_POLICY, countTokens).text)).toHaveLength(5);
    expect(recent(clipState(withMany, { ...DEFAULT_POLICY, ledgerRecentCommands: 2 }, countTokens).text)).toEqual([
      expect.stringContaining('`mix format`'),
      expect.stringContaining('`mix compile`'),
    ]);
  });

  it('is empty when no live batch has a ledger (batches written before it)', () => {
    expect(clipState([batch('old', [1], null)], DEFAULT_POLICY, countTokens)).toEqual({ ledger: null, cwd: null, text: '' });
  });
});
