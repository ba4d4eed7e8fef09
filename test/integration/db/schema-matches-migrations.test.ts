import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import drizzleConfig from '../../../drizzle.config.js';

/**
 * Migrations are forward-only: a committed migration is never deleted, renumbered or edited (a
 * comment may be added to its SQL: drizzle's migrator records each file's hash but compares only
 * the journal's `when` with the last one applied). This file checks what that needs:
 * - the journal lists every migration file once, in the order of their numbers, with `when`
 *   strictly increasing (the migrator skips an entry whose `when` is not past the last one a
 *   database applied), each with a snapshot of its own;
 * - SQL that drizzle's schema does not describe (functions, triggers, extensions, statements
 *   that change rows) says so in the migration's header, `-- Migration NNNN (hand-written): …`;
 * - the drizzle schema (src/db/schema.ts) and the migrations agree: `drizzle-kit generate`, run
 *   on a copy of migrations/, finds nothing to add.
 * Numbers may have gaps (0005 was deleted after it was committed; none is reused). drizzle-kit
 * numbers a new migration after the journal's last index, which the gap puts one behind the file
 * numbers: after `npm run db:generate`, give the new file the next free number, and its snapshot
 * the same one (drizzle-kit writes it over the last migration's snapshot; restore that one).
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const migrationsDir = path.join(repoRoot, 'migrations');

interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
}

const journal = JSON.parse(readFileSync(path.join(migrationsDir, 'meta/_journal.json'), 'utf8')) as { entries: JournalEntry[] };
const sqlFiles = readdirSync(migrationsDir).filter((name) => name.endsWith('.sql'));
const snapshotFiles = readdirSync(path.join(migrationsDir, 'meta')).filter((name) => name.endsWith('_snapshot.json'));
const numberOf = (tag: string): string => /^(\d+)_/.exec(tag)?.[1] ?? `(no number in ${tag})`;

describe('the migrations journal', () => {
  it('lists every migration file once, numbered in order, with strictly increasing `when`', () => {
    const entries = journal.entries;
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.map((e) => e.idx)).toEqual(entries.map((_, i) => i));

    const tags = entries.map((e) => e.tag);
    expect(tags.filter((tag, i) => tags.indexOf(tag) !== i)).toEqual([]);
    expect(tags.filter((tag) => !/^\d{4}_[a-z0-9_]+$/.test(tag))).toEqual([]);
    const numbers = tags.map(numberOf);
    const outOfOrder = numbers.flatMap((n, i) => (i > 0 && n <= (numbers[i - 1] as string) ? [`${tags[i - 1]} then ${tags[i]}`] : []));
    expect(outOfOrder, 'file numbers increase along the journal; two files never share one').toEqual([]);

    const notLater = entries.flatMap((e, i) => {
      const previous = entries[i - 1];
      return previous && e.when <= previous.when ? [`${e.tag} (when ${e.when}) is not after ${previous.tag} (when ${previous.when})`] : [];
    });
    expect(notLater).toEqual([]);

    const files = new Set(sqlFiles.map((name) => name.replace(/\.sql$/, '')));
    expect(
      tags.filter((tag) => !files.has(tag)),
      'journal entries without their .sql file',
    ).toEqual([]);
    expect(
      [...files].filter((file) => !tags.includes(file)),
      '.sql files the journal does not list (the migrator would never run them)',
    ).toEqual([]);

    const snapshots = new Set(snapshotFiles);
    expect(
      numbers.map((n) => `${n}_snapshot.json`).filter((name) => !snapshots.has(name)),
      'journal entries without their own snapshot',
    ).toEqual([]);
    expect(
      snapshotFiles.filter((name) => !numbers.includes(numberOf(name))),
      'snapshots of no journal entry',
    ).toEqual([]);
  });

  it('marks the SQL drizzle does not describe with the header `-- Migration NNNN (hand-written): …`', () => {
    const HAND_WRITTEN =
      /^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE|TRIGGER|EXTENSION|RULE)|DROP\s+(?:FUNCTION|PROCEDURE|TRIGGER|EXTENSION|RULE)|DO\b|INSERT\b|UPDATE\b|DELETE\b|COMMENT\s+ON)/i;
    const unmarked: string[] = [];
    const misnumbered: string[] = [];
    for (const file of sqlFiles) {
      const text = readFileSync(path.join(migrationsDir, file), 'utf8');
      const number = numberOf(file);
      const statements = text.split('--> statement-breakpoint').map((statement) => statement.replace(/^\s*(?:--[^\n]*\n\s*)*/, ''));
      const handWritten = statements.filter((statement) => HAND_WRITTEN.test(statement)).map((s) => s.split('\n')[0]?.slice(0, 80));
      if (handWritten.length > 0 && !text.startsWith(`-- Migration ${number} (hand-written): `)) {
        unmarked.push(`${file}: ${handWritten.join(' | ')}`);
      }
      const header = /^-- Migration (\d+)/.exec(text);
      if (header && header[1] !== number) misnumbered.push(`${file}: its header says ${header[1]}`);
    }
    expect(
      unmarked,
      'a migration with hand-written SQL starts with `-- Migration NNNN (hand-written): <what drizzle does not see>`',
    ).toEqual([]);
    expect(misnumbered).toEqual([]);
  });
});

describe('the drizzle schema and the migrations', () => {
  const workDir = mkdtempSync(path.join(tmpdir(), 'compactd-drizzle-generate-'));
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('agree: drizzle-kit generate finds nothing to add', async () => {
    // drizzle-kit reads its snapshots through paths relative to its working directory: it runs
    // in workDir, on a copy of migrations/, with the project's config pointed at that copy
    const copy = path.join(workDir, 'migrations');
    cpSync(migrationsDir, copy, { recursive: true });
    const schema = drizzleConfig.schema;
    const config = {
      ...drizzleConfig,
      schema: Array.isArray(schema) ? schema.map((s) => path.resolve(repoRoot, s)) : path.resolve(repoRoot, schema as string),
      out: './migrations',
    };
    writeFileSync(path.join(workDir, 'drizzle.config.ts'), `export default ${JSON.stringify(config, null, 2)};\n`);
    const before = contents(copy);

    const bin = path.join(path.dirname(createRequire(import.meta.url).resolve('drizzle-kit')), 'bin.cjs');
    const run = await runProcess(process.execPath, [bin, 'generate', '--config', 'drizzle.config.ts'], workDir, 120_000);

    const after = contents(copy);
    const added = [...after.keys()].filter((file) => !before.has(file));
    const changed = [...after.keys()].filter((file) => before.has(file) && before.get(file) !== after.get(file));
    const generatedSql = added
      .filter((file) => file.endsWith('.sql'))
      .map((file) => `${file}:\n${readFileSync(path.join(copy, file), 'utf8')}`)
      .join('\n\n');
    const report = [
      'src/db/schema.ts and migrations/ disagree: a schema change needs its migration (npm run db:generate, then renumber; see the top of this file).',
      generatedSql && `drizzle-kit generate wrote:\n${generatedSql}`,
      changed.length > 0 && `and changed: ${changed.join(', ')}`,
      `drizzle-kit exited with ${run.code}:\n${run.output}`,
    ]
      .filter(Boolean)
      .join('\n\n');
    expect({ code: run.code, added, changed }, report).toEqual({ code: 0, added: [], changed: [] });
    expect(run.output).toMatch(/No schema changes/);
  }, 180_000);
});

/** Every file under `dir` (relative path → sha256 of its bytes). */
function contents(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (sub: string): void => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else
        out.set(
          rel,
          createHash('sha256')
            .update(readFileSync(path.join(dir, rel)))
            .digest('hex'),
        );
    }
  };
  if (existsSync(dir)) walk('');
  return out;
}

/** Runs a command to its end (killed past `timeoutMs`: a question drizzle-kit asks, such as a
 * rename it cannot tell from a drop and an add, waits for an answer that never comes). */
function runProcess(command: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
