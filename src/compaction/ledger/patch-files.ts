import type { FileEffect } from './effects.js';

/**
 * Files of an OpenAI/Codex `apply_patch` envelope:
 *   *** Begin Patch
 *   *** Update File: path        (optionally followed by `*** Move to: new/path`)
 *   *** Add File: path
 *   *** Delete File: path
 *   *** End Patch
 * with `+`/`-` lines under each header; the gist counts them.
 */

const HEADER = /^\*\*\* (Update|Add|Delete) File: (.+)$/;
const MOVE = /^\*\*\* Move to: (.+)$/;

interface Section {
  kind: 'Update' | 'Add' | 'Delete';
  path: string;
  movedTo?: string;
  added: number;
  removed: number;
}

export function isPatchEnvelope(text: string): boolean {
  return text.includes('*** Begin Patch') || HEADER.test(text.split('\n').find((l) => l.startsWith('*** ')) ?? '');
}

function gistOf(section: Section): string {
  return `+${section.added} −${section.removed} lines`;
}

export function patchFileEffects(patch: string): FileEffect[] {
  const sections: Section[] = [];
  for (const raw of patch.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const header = HEADER.exec(line);
    if (header) {
      sections.push({ kind: header[1] as Section['kind'], path: (header[2] as string).trim(), added: 0, removed: 0 });
      continue;
    }
    const current = sections[sections.length - 1];
    if (!current) continue;
    const move = MOVE.exec(line);
    if (move) current.movedTo = (move[1] as string).trim();
    else if (line.startsWith('+')) current.added += 1;
    else if (line.startsWith('-')) current.removed += 1;
  }
  return sections.flatMap((s): FileEffect[] => {
    if (s.kind === 'Delete') return [{ path: s.path, action: 'deleted' }];
    if (s.kind === 'Add') return [{ path: s.path, action: 'created', gist: `+${s.added} lines` }];
    if (s.movedTo === undefined) return [{ path: s.path, action: 'edited', gist: gistOf(s) }];
    return [
      { path: s.path, action: 'moved', movedTo: s.movedTo },
      { path: s.movedTo, action: 'edited', gist: `${gistOf(s)}, moved from ${s.path}` },
    ];
  });
}
