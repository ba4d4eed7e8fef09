import { shellScript } from '../command-line.js';
import { type CallEffects, effects, NO_EFFECTS } from '../effects.js';
import type { FileAction } from '../schema.js';
import { shellFileEffects } from '../shell-files.js';
import type { ToolCall } from '../tool-calls.js';
import { stringField } from './fields.js';
import { EDITOR_COMMANDS, editorEffects } from './openhands.js';
import { taskItems } from './tasks.js';

/**
 * Any other tool: an input field that holds a path makes it a file tool (what it did is read
 * off its name: write/create, edit/replace/patch, delete/remove, move/rename, else a read), a
 * field that holds a command makes it a shell, a list of items with a status a todo list. A
 * tool named as a shell (`bash`, `run_shell_command`, `exec`, `terminal`…, as OpenAI function
 * tools often are) is a shell whichever field holds its script.
 */

const PATH_FIELDS = [
  'file_path',
  'filePath',
  'path',
  'filename',
  'file_name',
  'fileName',
  'file',
  'notebook_path',
  'target_file',
  'absolute_path',
];
const DESTINATION_FIELDS = ['new_path', 'newPath', 'destination', 'dest', 'target_path', 'to'];
const COMMAND_FIELDS = ['command', 'cmd', 'script'];
const SHELL_NAME = /(?:^|[^a-z])(?:shell|bash|zsh|sh|terminal|exec|cmd|run_?command)(?:$|[^a-z])/i;
/** Interpreters of a language are no shell: their code is not a command line. */
const INTERPRETER_NAME = /python|jupyter|notebook|sql|javascript|node|ruby|\bjs\b/i;
/** Where a shell-named tool may hold its script when it has no command field; `commands` lists lines run in turn. */
const SHELL_INPUT_FIELDS = ['commands', 'code', 'input', 'args', 'argv'];

/** The script of a tool named as a shell, from whichever field holds it. */
function shellNamedInput(tool: string, input: Record<string, unknown>): unknown {
  if (!SHELL_NAME.test(tool) || INTERPRETER_NAME.test(tool)) return undefined;
  const field = SHELL_INPUT_FIELDS.find((f) => input[f] !== undefined);
  const value = field === undefined ? undefined : input[field];
  const lines = field === 'commands' && Array.isArray(value) && value.every((v) => typeof v === 'string');
  return lines ? value.join('\n') : value;
}

function actionOf(tool: string): FileAction {
  const name = tool.toLowerCase();
  if (/delete|remove|unlink|\brm\b/.test(name)) return 'deleted';
  if (/move|rename|\bmv\b/.test(name)) return 'moved';
  if (/write|create|save|new_file|\badd/.test(name)) return 'created';
  if (/edit|replace|patch|update|insert|modify|append|change/.test(name)) return 'edited';
  return 'read';
}

/** A string that looks like a file path rather than a word or a sentence. */
function looksLikePath(value: string): boolean {
  return (
    value.length < 512 &&
    !/[\n\r]/.test(value) &&
    !/\s{2,}/.test(value) &&
    /[\w]/.test(value) &&
    (/[/\\]/.test(value) || /\.[A-Za-z0-9]{1,8}$/.test(value))
  );
}

export function genericEffects(call: ToolCall): CallEffects {
  const input = call.input;
  const path = PATH_FIELDS.map((f) => input[f]).find((v): v is string => typeof v === 'string' && looksLikePath(v));
  const commandValue = COMMAND_FIELDS.map((f) => input[f]).find((v) => v !== undefined);
  if (path !== undefined && typeof commandValue === 'string' && EDITOR_COMMANDS.has(commandValue))
    return editorEffects(call, commandValue, path);
  if (path !== undefined) {
    const action = actionOf(call.tool);
    const movedTo = action === 'moved' ? stringField(input, ...DESTINATION_FIELDS) : undefined;
    if (movedTo !== undefined)
      return effects({
        files: [
          { path, action, movedTo },
          { path: movedTo, action: 'created', gist: `moved from ${path}` },
        ],
      });
    return effects({ files: [{ path, action }] });
  }
  const script = shellScript(commandValue ?? shellNamedInput(call.tool, input));
  if (script !== null) return effects({ command: script, files: shellFileEffects(script), filesNeedSuccess: false });
  const tasks = taskItems(input);
  return tasks === null ? NO_EFFECTS : effects({ tasks });
}
