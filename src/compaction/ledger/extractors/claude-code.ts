import { type CallEffects, effects, NO_EFFECTS } from '../effects.js';
import { shellFileEffects } from '../shell-files.js';
import type { ToolCall } from '../tool-calls.js';
import { charCount, sizeGist, stringField } from './fields.js';
import { taskItems } from './tasks.js';

/** Claude Code's tools (Read, Write, Edit, MultiEdit, NotebookEdit, Bash, TodoWrite; searches touch no file). */

const SEARCHES = new Set([
  'Glob',
  'Grep',
  'LS',
  'WebFetch',
  'WebSearch',
  'Task',
  'TaskOutput',
  'KillShell',
  'BashOutput',
  'AskUserQuestion',
  'Skill',
  'ExitPlanMode',
  'EnterPlanMode',
]);

function writeEffects(call: ToolCall, path: string): CallEffects {
  // the result tells a new file from an overwritten one: "File created successfully at …" / "… has been updated"
  const updated = call.result !== null && /has been (?:updated|overwritten)/.test(call.result.text);
  return effects({ files: [{ path, action: updated ? 'edited' : 'created', gist: `wrote ${charCount(call.input['content'])} chars` }] });
}

function multiEditGist(edits: unknown): string {
  const list = Array.isArray(edits) ? (edits as Array<Record<string, unknown>>) : [];
  const before = list.reduce((sum, e) => sum + charCount(e?.['old_string']), 0);
  const after = list.reduce((sum, e) => sum + charCount(e?.['new_string']), 0);
  return `${list.length} edits: ${before} → ${after} chars`;
}

export function claudeCodeEffects(call: ToolCall): CallEffects | null {
  const input = call.input;
  const path = stringField(input, 'file_path', 'notebook_path');
  switch (call.tool) {
    case 'Read':
    case 'NotebookRead':
      return path === undefined ? NO_EFFECTS : effects({ files: [{ path, action: 'read' }] });
    case 'Write':
      return path === undefined ? NO_EFFECTS : writeEffects(call, path);
    case 'Edit': {
      if (path === undefined) return NO_EFFECTS;
      const all = input['replace_all'] === true ? ', every occurrence' : '';
      return effects({ files: [{ path, action: 'edited', gist: `${sizeGist(input['old_string'], input['new_string'])}${all}` }] });
    }
    case 'MultiEdit':
      return path === undefined ? NO_EFFECTS : effects({ files: [{ path, action: 'edited', gist: multiEditGist(input['edits']) }] });
    case 'NotebookEdit': {
      if (path === undefined) return NO_EFFECTS;
      const mode = stringField(input, 'edit_mode') ?? 'replace';
      return effects({ files: [{ path, action: 'edited', gist: `cell ${mode}: ${charCount(input['new_source'])} chars` }] });
    }
    case 'Bash': {
      const command = stringField(input, 'command');
      return command === undefined ? NO_EFFECTS : effects({ command, files: shellFileEffects(command), filesNeedSuccess: false });
    }
    case 'TodoWrite':
      return effects({ tasks: taskItems(input) });
    default:
      return SEARCHES.has(call.tool) ? NO_EFFECTS : null;
  }
}
