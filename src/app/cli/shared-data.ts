import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Where the shared real transcripts live: `COMPACTD_SHARED_DATA` (the `data` folder) when
 * set, else `../shared/data` beside the repository, else the workplace's `/work/shared/data`
 * (a checkout elsewhere on the same machine). Only read at run time, never copied.
 */
export function realTranscriptsDir(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    ...(env['COMPACTD_SHARED_DATA'] ? [path.resolve(env['COMPACTD_SHARED_DATA'], 'real-transcripts')] : []),
    path.resolve(repoRoot, '../shared/data/real-transcripts'),
    '/work/shared/data/real-transcripts',
  ];
  return candidates.find((dir) => existsSync(dir)) ?? (candidates[0] as string);
}
