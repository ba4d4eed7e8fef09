import { describe, expect, it } from 'vitest';

import {
  blockCommands,
  commandIdentifier,
  extractCommands,
  extractIds,
  isObservation,
} from '../../../src/compaction/identifier-sources.js';
import { extractChunkIdentifiers, rankChunkIdentifiers } from '../../../src/compaction/summarize/identifiers.js';
import { conversation, text, toolUse } from '../../fixtures/builders.js';

describe('identifier sources the path and error patterns miss', () => {
  it.each([
    ['npm test -- --run src/a.test.ts\necho done', 'npm test -- --run src/a.test.ts'],
    ['\n\n  git   status  ', 'git status'],
    ['x', null],
    ['', null],
  ])('command %j → %j', (command, expected) => {
    expect(commandIdentifier(command)).toBe(expected);
  });

  it('cuts a long command at a word', () => {
    const long = `grep -rn ${'pattern '.repeat(40)}`;
    const id = commandIdentifier(long) ?? '';
    expect(id.length).toBeLessThanOrEqual(160);
    expect(long.startsWith(id)).toBe(true);
  });

  it('takes commands from tool inputs and from fenced shell actions of the assistant only', () => {
    expect(blockCommands(toolUse('t', 'Bash', { command: 'pytest -x tests/test_api.py' }), 'assistant')).toEqual([
      'pytest -x tests/test_api.py',
    ]);
    expect(blockCommands(text('Run this:\n```bash\nmake build\n```'), 'assistant')).toEqual(['make build']);
    expect(blockCommands(text('```bash\nrm -rf /\n```'), 'user')).toEqual([]);
    const messages = conversation().assistant('```sh\nls -la\n```').exchange('a', 'Bash', { command: 'ls -la' }, 'ok').build();
    expect(extractCommands(messages)).toEqual(['ls -la']);
  });

  it('finds letter-digit codes, ISO dates and e-mail addresses, not plain words or numbers with units', () => {
    const found = extractIds(
      'Reservation NM1VX1 on flight HAT300 for sophia_silva_7557 on 2024-05-15, mail ops@example.com; took 250ms over 3 retries',
    );
    expect(found).toEqual(expect.arrayContaining(['NM1VX1', 'HAT300', 'sophia_silva_7557', '2024-05-15', 'ops@example.com']));
    expect(found).not.toContain('250ms');
    expect(found).not.toContain('retries');
  });

  it('tells a command output from what a user said', () => {
    expect(isObservation('user', '<returncode>1</returncode>\n<output>boom</output>')).toBe(true);
    expect(isObservation('user', 'please check the returncode')).toBe(false);
    expect(isObservation('assistant', '<output>x</output>')).toBe(false);
  });
});

describe('the gate extracts every kind from a chunk, uncapped', () => {
  it('ranks commands and ids with the rest, and caps only on request', () => {
    const builder = conversation().user('Book NM1VX1 for 2024-05-15 and mail ops@example.com');
    for (let i = 0; i < 80; i += 1) builder.exchange(`c${i}`, 'Bash', { command: `cat /srv/app/file${i}.log` }, `line ${i}`);
    const messages = builder.build();
    const all = extractChunkIdentifiers(messages);
    expect(all).toEqual(
      expect.arrayContaining(['NM1VX1', '2024-05-15', 'ops@example.com', 'cat /srv/app/file79.log', '/srv/app/file79.log']),
    );
    expect(all.length).toBeGreaterThan(160);
    const ranked = rankChunkIdentifiers(messages);
    expect(ranked.ordered).toEqual(all);
    expect(extractChunkIdentifiers(messages, 20)).toHaveLength(20);
  });
});
