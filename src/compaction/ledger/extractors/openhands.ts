import { type CallEffects, effects, NO_EFFECTS } from '../effects.js';
import { shellFileEffects } from '../shell-files.js';
import type { ToolCall } from '../tool-calls.js';
import { charCount, sizeGist, stringField } from './fields.js';
import { taskItems } from './tasks.js';

/**
 * OpenHands tools: `execute_bash` / `run` with `command`, the editor (`str_replace_editor`,
 * `edit`, `file_editor`) with `command: view|create|str_replace|insert|undo_edit` and `path`,
 * `read` and the content-rewriting `edit` with `path`, `task_tracker` with its task list.
 */

const SHELLS = new Set(['execute_bash', 'run', 'bash', 'cmd_run', 'execute_command']);
const EDITORS = new Set(['str_replace_editor', 'file_editor', 'edit', 'edit_file', 'str_replace_based_edit_tool']);
export const EDITOR_COMMANDS = new Set(['view', 'create', 'str_replace', 'insert', 'undo_edit']);

/** The editor's commands; exported for tools of other agents that copy its shape. */
export function editorEffects(call: ToolCall, command: string, path: string): CallEffects {
  const input = call.input;
  switch (command) {
    case 'view':
      // a directory listing is no read of a file
      if (call.result !== null && /files and directories up to \d+ levels? deep/.test(call.result.text)) return NO_EFFECTS;
      return effects({ files: [{ path, action: 'read' }] });
    case 'create':
      return effects({ files: [{ path, action: 'created', gist: `wrote ${charCount(input['file_text'])} chars` }] });
    case 'str_replace':
      return effects({ files: [{ path, action: 'edited', gist: sizeGist(input['old_str'], input['new_str']) }] });
    case 'insert': {
      const line = typeof input['insert_line'] === 'number' ? ` after line ${input['insert_line']}` : '';
      return effects({ files: [{ path, action: 'edited', gist: `inserted ${charCount(input['new_str'])} chars${line}` }] });
    }
    case 'undo_edit':
      return effects({ files: [{ path, action: 'edited', gist: 'undo of the last edit' }] });
    default:
      return NO_EFFECTS;
  }
}

export function openHandsEffects(call: ToolCall): CallEffects | null {
  const input = call.input;
  if (SHELLS.has(call.tool)) {
    const command = stringField(input, 'command');
    // is_input sends keys to a running process (C-c, answers): no new command
    if (command === undefined || input['is_input'] === true || input['is_input'] === 'true') return NO_EFFECTS;
    return effects({ command, files: shellFileEffects(command), filesNeedSuccess: false });
  }
  const path = stringField(input, 'path', 'file_path');
  if (EDITORS.has(call.tool) && path !== undefined) {
    const command = stringField(input, 'command');
    if (command !== undefined) return editorEffects(call, command, path);
    if (call.tool === 'edit' && typeof input['content'] === 'string') {
      return effects({ files: [{ path, action: 'edited', gist: `wrote ${charCount(input['content'])} chars` }] });
    }
    // older events carry a view as the path and a line range, with no command
    return editorEffects(call, 'view', path);
  }
  if (call.tool === 'read' && path !== undefined) return effects({ files: [{ path, action: 'read' }] });
  if (call.tool === 'task_tracker') return input['command'] === 'plan' ? effects({ tasks: taskItems(input) }) : NO_EFFECTS;
  if (call.tool === 'finish' || call.tool === 'think') return NO_EFFECTS;
  return null;
}
