import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

/**
 * The functional core's tree shows the pipeline (SPEC §2.1): a few shared files at the root of
 * src/compaction/, one folder per stage, each with an index.ts that is its public surface, and
 * each stage in the pipeline order that .dependency-cruiser.cjs checks imports against.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const core = path.join(repoRoot, 'src/compaction');
const entries = readdirSync(core, { withFileTypes: true });
const stages = entries.filter((e) => e.isDirectory()).map((e) => e.name);
const MAX_ROOT_FILES = 12;

function pipelineOrder(): string[] {
  const rules = readFileSync(path.join(repoRoot, '.dependency-cruiser.cjs'), 'utf8');
  const list = /const CORE_ROOMS = \[([^\]]*)\]/.exec(rules)?.[1] ?? '';
  return [...list.matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
}

describe('src/compaction layout', () => {
  it(`keeps at most ${MAX_ROOT_FILES} shared files at its root`, () => {
    const files = entries.filter((e) => e.isFile()).map((e) => e.name);
    expect(files.length, files.join(', ')).toBeLessThanOrEqual(MAX_ROOT_FILES);
  });

  it.each(stages)('gives the stage folder %s an index.ts', (stage) => {
    expect(existsSync(path.join(core, stage, 'index.ts'))).toBe(true);
  });

  it('places every stage folder in the pipeline order of the dependency rules', () => {
    expect([...pipelineOrder()].sort()).toEqual([...stages].sort());
  });
});
