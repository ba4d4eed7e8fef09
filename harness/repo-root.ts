import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root: where bin/compactd.mjs, samples/ and the reports are. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
