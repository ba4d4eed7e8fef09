#!/usr/bin/env node
// Runs the compiled CLI. dist/ is built by `npm run build`, which `npm ci` runs through the
// `prepare` script; tests build it in their global setup.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('compactd: dist/main.js is missing; build it with `npm run build` (npm ci does it too)\n');
  process.exit(1);
}
await import(main.href);
