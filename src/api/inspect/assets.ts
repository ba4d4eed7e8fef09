import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The inspector's one script and one stylesheet, read once. They are plain files beside the
 * sources (no bundler): run from src/ (tsx, vitest) they are here; compiled, `npm run build`
 * copies them beside this module in dist/ (scripts/copy-inspector-assets.mjs). A dist/ built
 * by tsc alone (the test suite's incremental build) reads them from the checkout's src/.
 */
const CANDIDATES = [new URL('./assets/', import.meta.url), new URL('../../../src/api/inspect/assets/', import.meta.url)];

export const ASSET_TYPES: Record<string, string> = {
  'inspect.js': 'text/javascript; charset=utf-8',
  'inspect.css': 'text/css; charset=utf-8',
};

function assetDirectory(): URL {
  const found = CANDIDATES.find((dir) => existsSync(fileURLToPath(new URL('inspect.js', dir))));
  if (!found) throw new Error(`inspector assets not found in ${CANDIDATES.map((dir) => fileURLToPath(dir)).join(' or ')}`);
  return found;
}

/** Every asset's bytes by file name; a missing asset fails at startup, not on the first page view. */
export function loadAssets(): Map<string, Buffer> {
  const dir = assetDirectory();
  return new Map(Object.keys(ASSET_TYPES).map((name) => [name, readFileSync(new URL(name, dir))]));
}
