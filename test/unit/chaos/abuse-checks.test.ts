import { describe, expect, it } from 'vitest';

import { maxSizeMessage, messageBytes, NEEDLE, whitespaceText } from '../../../chaos/lib/abuse-texts.js';
import { internalsShown } from '../../../chaos/lib/job-errors.js';
import { overlapping, readFigures } from '../../../chaos/lib/read-probe.js';

// The abuse suite's own yardsticks: if they were wrong, its figures would be too.
describe('abuse suite: job error check', () => {
  it('flags what a failing query leaked into a job error (SQL, parameters, stack frames)', () => {
    // shaped after a real job error on the code before issue 26 (drizzle's message for a failed commit)
    const leaked =
      'Failed query: \n    with archived as (\n      insert into archived_messages\n        (id, seq)\n      select m.id, $1 from "messages" m\nparams: c57e796a,1,2';
    expect(internalsShown(leaked)).not.toBeNull();
    expect(internalsShown('delete from "messages" where conversation_id = x')).toBe('SQL statement');
    expect(internalsShown('update "compaction_jobs" set status = 1')).toBe('SQL statement');
    expect(internalsShown('update "messages" m set content = r.content')).toBe('SQL statement');
    expect(internalsShown('value out of range for $3')).toBe('bind parameter');
    expect(internalsShown('boom\n    at commitJob (/work/main/dist/worker/finish.js:12:7)')).toBe('stack frame');
  });

  it('passes short messages that say what happened', () => {
    for (const message of [
      '{"code":"LLM_SERVER_ERROR","message":"anthropic answered 500: Internal server error (simulated)."}',
      '{"code":"STEP_FAILED","message":"Maximum call stack size exceeded"}',
      '{"code":"ARCHIVE_TOO_LARGE","message":"the archived text could not be indexed"}',
      '{"code":"CANCELLED","message":"select another model from the settings"}',
      '{"code":"X","message":"update the settings, then delete from the list the routine that failed"}',
    ]) {
      expect(internalsShown(message), message).toBeNull();
    }
  });
});

describe('abuse suite: texts', () => {
  it('builds messages of each shape just under the size limit, the needle inside', () => {
    for (const shape of ['prose', 'logs', 'long-line'] as const) {
      const message = maxSizeMessage(shape, 200_000, 3);
      const text = (message.content[0] as { text: string }).text;
      expect(messageBytes(message)).toBeLessThanOrEqual(200_000);
      expect(messageBytes(message)).toBeGreaterThan(199_000);
      expect(text).toContain(NEEDLE);
      if (shape === 'long-line') expect(text).not.toMatch(/\s/);
    }
  });

  it('puts the whole run of whitespace between two words', () => {
    for (const shape of ['spaces', 'newlines', 'mixed'] as const) {
      const text = whitespaceText(shape, 1_000);
      expect(text.length).toBeGreaterThanOrEqual(1_000 + 'beforeafter'.length);
      expect(text.startsWith('before') && text.endsWith('after')).toBe(true);
    }
    expect(whitespaceText('spaces', 1_000).slice(6, -5)).toMatch(/^ {1000}$/);
  });
});

describe('abuse suite: bystander reads', () => {
  it('counts the reads in flight at any moment of a window, the slow one included', () => {
    const samples = [
      { at: 0, ms: 5, outcome: 200 },
      { at: 90, ms: 20_000, outcome: 200 },
      { at: 20_100, ms: 5, outcome: 200 },
      { at: 30_000, ms: 5, outcome: 'timeout' },
    ];
    const during = overlapping(samples, 100, 20_200);
    expect(during.map((s) => s.at)).toEqual([90, 20_100]);
    expect(readFigures(during)).toMatchObject({ reads: 2, max: 20_000, failed: 0 });
    expect(readFigures(samples).failed).toBe(1);
  });
});
