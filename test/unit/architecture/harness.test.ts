import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

/**
 * One harness (docs/testing.md "The harness"): the tests, the bench, the chaos suites and the
 * eval start compactd through harness/; the tests may import the other three, never the
 * reverse; there is one freePort and one spawnCompactd; every end-to-end test sits in one of
 * test/e2e's three folders.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const E2E_FOLDERS = ['clients', 'pipeline', 'suites'];

function sourceFiles(folder: string): string[] {
  const absolute = path.join(repoRoot, folder);
  return readdirSync(absolute, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs)$/.test(entry.name))
    .map((entry) => path.relative(repoRoot, path.join(entry.parentPath, entry.name)));
}

/** Where each relative import of `file` points, as a path from the repository's root. */
function relativeImports(file: string): string[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1] as string);
  return specifiers.map((specifier) => path.relative(repoRoot, path.resolve(repoRoot, path.dirname(file), specifier)));
}

function definitionsOf(name: string): string[] {
  const pattern = new RegExp(`(?:function\\s+${name}\\b|(?:const|let)\\s+${name}\\s*=)`);
  return ['src', 'test', 'bench', 'chaos', 'eval', 'harness', 'scripts', 'examples']
    .flatMap(sourceFiles)
    .filter((file) => pattern.test(readFileSync(path.join(repoRoot, file), 'utf8')));
}

describe('one harness', () => {
  it.each(['bench', 'chaos', 'eval', 'harness'])('%s/ imports nothing from test/', (folder) => {
    const offending = sourceFiles(folder).flatMap((file) =>
      relativeImports(file)
        .filter((target) => target.startsWith('test/'))
        .map((target) => `${file} → ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it('harness/ imports nothing from the bench, the chaos suites or the eval', () => {
    const offending = sourceFiles('harness').flatMap((file) =>
      relativeImports(file)
        .filter((target) => /^(bench|chaos|eval)\//.test(target))
        .map((target) => `${file} → ${target}`),
    );
    expect(offending).toEqual([]);
  });

  it.each(['freePort', 'spawnCompactd'])('defines %s once, in harness/', (name) => {
    const files = definitionsOf(name);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^harness\//);
  });

  it(`keeps every end-to-end test in test/e2e/{${E2E_FOLDERS.join(',')}}/`, () => {
    const misplaced = sourceFiles('test/e2e').filter((file) => !E2E_FOLDERS.some((folder) => file.startsWith(`test/e2e/${folder}/`)));
    expect(misplaced).toEqual([]);
  });
});
