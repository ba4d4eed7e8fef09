import { type FileAction, shellFileChanges } from './shell.js';
import type { Step } from './steps.js';

/**
 * The files a span changed and how, from its tool calls: Claude Code's Write / Edit /
 * MultiEdit / NotebookEdit, `str_replace_editor`-style editors (OpenHands, SWE-agent),
 * `apply_patch` (Codex) and shell commands. A file keeps the action that describes where
 * it ended: deleted or moved if that came last, created if the span created it, else edited.
 */

export interface FileChange {
  path: string;
  action: FileAction;
  /** where a move put it */
  to?: string;
}

interface Op {
  path: string;
  action: FileAction | 'written';
  to?: string;
}

const EDIT_TOOLS = new Set(['Edit', 'MultiEdit', 'NotebookEdit', 'edit_file', 'replace_in_file', 'insert_content']);
const WRITE_TOOLS = new Set(['Write', 'write_file', 'create_file', 'write_to_file']);
const EDITOR_TOOLS = /^(str_replace_editor|str_replace_based_edit_tool|edit|file_editor)$/;
const PATCH_LINE = /^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm;

function str(value: unknown): string | null {
  return typeof value === 'string' && value.trim().length > 0 ? value.trim() : null;
}

function pathOf(input: Record<string, unknown>): string | null {
  return str(input['file_path']) ?? str(input['notebook_path']) ?? str(input['path']) ?? str(input['filename']);
}

/** `*** Add File:` / `*** Update File:` / `*** Delete File:` / `*** Move to:` of a patch. */
export function patchOps(patch: string): Op[] {
  const out: Op[] = [];
  for (const match of patch.matchAll(PATCH_LINE)) {
    if (match[3] !== undefined) {
      const last = out[out.length - 1];
      if (last) Object.assign(last, { action: 'moved', to: match[3].trim() });
      continue;
    }
    const action = match[1] === 'Add' ? 'created' : match[1] === 'Delete' ? 'deleted' : 'edited';
    out.push({ path: (match[2] ?? '').trim(), action });
  }
  return out;
}

const SHELL_SYNTAX_ERROR = /^(?:\/bin\/)?(?:ba|z|da)?sh: (?:-c: )?line \d+: syntax error/m;

/** `sed: can't read X: …`, `X: No such file or directory`: names the shell found no file for. */
function missingFiles(result: string): Set<string> {
  const out = new Set<string>();
  for (const match of result.matchAll(/can't read ([^:\n]+): No such file|(?:^|\s)([^\s:]+): No such file or directory/gm)) {
    const name = (match[1] ?? match[2] ?? '').trim();
    if (name) out.add(name);
  }
  return out;
}

function stepOps(step: Step): Op[] {
  const { tool, input } = step;
  if (step.command !== null) {
    const ops: Op[] = step.command.includes('*** Begin Patch') ? patchOps(step.command) : [];
    // a command line the shell could not parse ran nothing at all
    if (SHELL_SYNTAX_ERROR.test(step.result?.text ?? '')) return [];
    // a word the shell took for a file that was not there changed nothing (a mis-quoted script's pieces)
    const missing = missingFiles(step.result?.text ?? '');
    return [...ops, ...shellFileChanges(step.command).filter((op) => !missing.has(op.path))];
  }
  // an editor call that failed wrote nothing
  if (step.result?.failed === true) return [];
  const path = pathOf(input);
  if (tool === 'apply_patch') return patchOps(str(input['input']) ?? str(input['patch']) ?? '');
  if (!path) return [];
  if (EDIT_TOOLS.has(tool)) return [{ path, action: 'edited' }];
  if (WRITE_TOOLS.has(tool)) {
    const said = step.result?.text ?? '';
    return [{ path, action: /created/i.test(said) ? 'created' : /updated|overwr/i.test(said) ? 'edited' : 'written' }];
  }
  if (EDITOR_TOOLS.test(tool)) {
    const command = str(input['command']);
    if (command === 'create') return [{ path, action: 'created' }];
    if (command === 'str_replace' || command === 'insert' || command === 'edit' || command === 'undo_edit')
      return [{ path, action: 'edited' }];
  }
  return [];
}

/** Paths read or written earlier: a later `written` of such a path overwrote it (edited). */
function knownPaths(steps: readonly Step[]): Map<string, number> {
  const firstSeen = new Map<string, number>();
  steps.forEach((step, i) => {
    const path = pathOf(step.input);
    if (path && !firstSeen.has(path)) firstSeen.set(path, i);
  });
  return firstSeen;
}

/** Every file the steps changed, in the order they were last changed, with the action that describes its end state. */
export function fileChanges(steps: readonly Step[]): FileChange[] {
  const seen = knownPaths(steps);
  const state = new Map<string, FileChange>();
  steps.forEach((step, i) => {
    for (const op of stepOps(step)) {
      const before = state.get(op.path);
      let action: FileAction;
      if (op.action === 'written')
        action = before
          ? before.action === 'deleted' || before.action === 'moved'
            ? 'created'
            : before.action
          : (seen.get(op.path) ?? i) < i
            ? 'edited'
            : 'created';
      else if (op.action === 'edited' && before?.action === 'created') action = 'created';
      else action = op.action;
      state.delete(op.path);
      state.set(op.path, { path: op.path, action, ...(op.to ? { to: op.to } : {}) });
    }
  });
  return [...state.values()];
}
