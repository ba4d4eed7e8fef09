import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

/**
 * `npm ci` on a fresh clone stays quiet: every locked package with an install script is named in
 * `allowScripts` (allowed or denied on purpose), so npm has none left to warn about, and the
 * install guide (docs/install.md) says why each allowed one runs.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const readJson = (file: string) => JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8'));
const lock = readJson('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
const allowScripts = (readJson('package.json') as { allowScripts: Record<string, boolean> }).allowScripts;
const installGuide = readFileSync(path.join(repoRoot, 'docs/install.md'), 'utf8');

const withInstallScripts = [
  ...new Set(
    Object.entries(lock.packages)
      .filter(([location, entry]) => location !== '' && entry.hasInstallScript)
      .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length)),
  ),
];

describe('install scripts', () => {
  it('finds the locked packages that have one', () => {
    expect(withInstallScripts).toContain('esbuild');
  });

  it('names every one of them in allowScripts', () => {
    expect(withInstallScripts.filter((name) => !(name in allowScripts))).toEqual([]);
  });

  it('explains in docs/install.md why each allowed one runs', () => {
    const allowed = Object.entries(allowScripts)
      .filter(([, allow]) => allow)
      .map(([name]) => name);
    expect(allowed.filter((name) => !installGuide.includes(`\`${name}\``))).toEqual([]);
  });
});
