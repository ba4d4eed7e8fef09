import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { isBareExitLine } from '../../../../src/compaction/ledger/error-line.js';
import {
  extractLedger,
  guessCwd,
  type Ledger,
  ledgerCounts,
  LedgerSchema,
  mergeAllLedgers,
  renderLedger,
} from '../../../../src/compaction/ledger/index.js';
import { isObservationMessage } from '../../../../src/compaction/ledger/tool-calls.js';
import { isMetaContent } from '../../../../src/compaction/meta-turns.js';
import { groupUnits } from '../../../../src/compaction/plan/units.js';
import type { HistoryMessage } from '../../../../src/compaction/types.js';
import { loadRealSessions, type RealSession } from './real-sessions.js';

/**
 * The ledger over every conversation of the shared real transcripts (Claude Code sessions and
 * their subagents, mini-swe-agent runs, all 200 τ-bench conversations) and the OpenHands
 * fixtures, read through the product's importers.
 */

const sessions = loadRealSessions();
const ledgers = new Map<RealSession, Ledger>(sessions.map((s) => [s, extractLedger(s.messages)]));
const ledgerOf = (fragment: string): Ledger => {
  const session = sessions.find((s) => s.name.includes(fragment));
  if (!session) throw new Error(`no session ${fragment}`);
  return ledgers.get(session) as Ledger;
};
const changedPaths = (ledger: Ledger) => ledger.files.filter((f) => Object.keys(f.actions).some((a) => a !== 'read')).map((f) => f.path);

const SPOTTER = '/home/USER/projects/spotter-worktrees';

describe('extractLedger on the real transcripts', () => {
  it('reads the whole shared set', () => {
    const count = (format: string) => sessions.filter((s) => s.format === format).length;
    expect(count('claude-code')).toBeGreaterThanOrEqual(13);
    expect(count('mini-swe-agent')).toBe(8);
    expect(count('tau-bench')).toBe(200);
    expect(count('openhands')).toBe(2);
  });

  it('takes constraints and requests only from what a user typed, on every shared session', () => {
    const typed = (message: HistoryMessage) =>
      message.role === 'user' && message.meta !== true && !isMetaContent(message.role, message.content) && !isObservationMessage(message);
    for (const session of sessions) {
      const { instructions } = ledgers.get(session) as Ledger;
      for (const item of [...instructions.constraints, ...instructions.requests]) {
        const source = session.messages.find((m) => m.seq === item.seq);
        expect(source && typed(source), `${session.name} #${item.seq}: ${item.text}`).toBe(true);
        // from the user's own text blocks, never a tool result beside them
        const own = (source?.content ?? []).flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
        const words = item.text.replace(/…$/, '').split(/\s+/).slice(0, 3).join(' ');
        expect(own.replace(/\s+/g, ' ').includes(words), `${session.name} #${item.seq}: ${item.text}`).toBe(true);
      }
    }
  });

  it('holds the files each Claude Code session changed, with their actions', () => {
    const gqc = ledgerOf('258c7280-ae70-4798-800f-63464d01a85d.jsonl');
    const file = (l: Ledger, path: string) => l.files.find((f) => f.path === path);
    expect(file(gqc, `${SPOTTER}/spotter-gqc/lib/spotter_web/live/session_live.ex`)?.actions.edited).toBe(6);
    expect(file(gqc, `${SPOTTER}/spotter-gqc/lib/spotter/transcripts/annotation_message_ref.ex`)?.actions.created).toBe(1);
    expect(
      file(gqc, `${SPOTTER}/spotter-gqc/priv/repo/migrations/20260211203856_add_annotation_message_refs_and_source.exs`)?.lastChange,
    ).toBe('edited');
    const dov = ledgerOf('4d5611e5-241a-462a-8d15-5122611a9569.jsonl');
    expect(file(dov, `${SPOTTER}/spotter-dov/lib/spotter_web/live/session_live.ex`)?.actions.edited).toBe(11);
    expect(file(dov, `${SPOTTER}/spotter-dov/test/spotter_web/live/subagent_live_test.exs`)?.actions.created).toBe(1);
    const fum = ledgerOf('8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl');
    expect(changedPaths(fum)).toEqual(
      expect.arrayContaining([
        `${SPOTTER}/spotter-fum/priv/static/assets/spotter.css`,
        `${SPOTTER}/spotter-fum/lib/spotter_web/components/layouts/root.html.heex`,
      ]),
    );
    const te = ledgerOf('ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
    expect(changedPaths(te)).toEqual(
      expect.arrayContaining([`${SPOTTER}/spotter-4te/mix.exs`, `${SPOTTER}/spotter-4te/lib/spotter/telemetry/otel.ex`]),
    );
    // the Edit that missed its string there is an error resolved by the next Edit of the file
    expect(te.errors.filter((e) => e.tool === 'Edit').map((e) => [e.line, e.resolved])).toContainEqual([
      'String to replace not found in file.',
      true,
    ]);
  });

  it('holds every file a mini-swe-agent run submitted that one of its actions names', () => {
    for (const session of sessions.filter((s) => s.format === 'mini-swe-agent')) {
      const actions = session.messages
        .filter((m) => m.role === 'assistant')
        .map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n'));
      const named = (session.submittedFiles ?? []).filter((file) => actions.some((text) => text.includes(file)));
      expect(named.length, session.name).toBeGreaterThan(0);
      expect(changedPaths(ledgers.get(session) as Ledger), session.name).toEqual(expect.arrayContaining(named));
    }
    expect(ledgerOf('psf__requests-6028').files.find((f) => f.path === 'requests/utils.py')?.actions.edited).toBe(1);
  });

  it('holds the OpenHands edits and the τ-bench tool errors', () => {
    expect(changedPaths(ledgerOf('openhands-codeact-output'))).toEqual(['/workspace/acme__confkit__2.4/confkit/profile.py']);
    const tauErrors = sessions.filter((s) => s.format === 'tau-bench').flatMap((s) => (ledgers.get(s) as Ledger).errors);
    expect(tauErrors.length).toBeGreaterThan(20);
    expect(tauErrors.every((e) => e.line.startsWith('Error: '))).toBe(true);
  });

  it('never takes a bare exit status for an error line, and stores as its schema says', () => {
    for (const [session, ledger] of ledgers) {
      for (const error of ledger.errors) expect(isBareExitLine(error.line), `${session.name}: ${error.line}`).toBe(false);
      expect(
        ledger.errors.some((e) => /^exit code \d+$/i.test(e.line)),
        session.name,
      ).toBe(false);
      expect(LedgerSchema.parse(JSON.parse(JSON.stringify(ledger)))).toEqual(ledger);
    }
  });

  it('renders every ledger within its budget, escaped', () => {
    for (const [session, ledger] of ledgers) {
      const cwd = guessCwd(ledger) ?? undefined;
      for (const maxTokens of [150, 1_200]) {
        const text = renderLedger(ledger, { maxTokens, countTokens, ...(cwd !== undefined && { cwd }) });
        expect(countTokens(text), session.name).toBeLessThanOrEqual(maxTokens);
        expect(text).not.toMatch(/[<>]/);
        const counts = ledgerCounts(ledger);
        if (maxTokens > 150 && counts.filesChanged + counts.requests > 0) expect(text.length, session.name).toBeGreaterThan(0);
      }
    }
  });

  it('gives the same ledger whole or cut into three between units', () => {
    for (const session of sessions) {
      const cuts = cutPoints(session.messages);
      const parts = [session.messages.slice(0, cuts[0]), session.messages.slice(cuts[0], cuts[1]), session.messages.slice(cuts[1])];
      expect(mergeAllLedgers(parts.map(extractLedger)), session.name).toEqual(ledgers.get(session));
    }
  });
});

/** Two cut points at unit boundaries near a third and two thirds, never between an action and its observation. */
function cutPoints(messages: readonly HistoryMessage[]): [number, number] {
  const starts: number[] = [];
  let at = 0;
  for (const unit of groupUnits([...messages])) {
    if (at > 0 && !isObservationMessage(messages[at] as HistoryMessage)) starts.push(at);
    at += unit.messages.length;
  }
  const near = (target: number) => starts.reduce((best, s) => (Math.abs(s - target) < Math.abs(best - target) ? s : best), 0);
  const first = near(messages.length / 3);
  return [first, Math.max(first, near((2 * messages.length) / 3))];
}
