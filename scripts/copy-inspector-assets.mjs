#!/usr/bin/env node
// `npm run build` step after tsc: the inspector's script and stylesheet are plain files
// (no bundler), which tsc does not copy; dist/ gets them beside the compiled module that serves them.
import { cpSync } from 'node:fs';

const from = new URL('../src/api/inspect/assets/', import.meta.url);
const to = new URL('../dist/api/inspect/assets/', import.meta.url);
cpSync(from, to, { recursive: true });
