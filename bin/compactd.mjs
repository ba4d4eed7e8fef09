#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so `npx compactd …` works with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
