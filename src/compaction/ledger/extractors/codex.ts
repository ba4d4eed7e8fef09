import { shellScript } from '../command-line.js';
import { type CallEffects, effects, NO_EFFECTS } from '../effects.js';
import { isPatchEnvelope, patchFileEffects } from '../patch-files.js';
import { shellFileEffects } from '../shell-files.js';
import type { ToolCall } from '../tool-calls.js';
import { stringField } from './fields.js';
import { taskItems } from './tasks.js';

/**
 * OpenAI/Codex tools: `shell` (and its later names) with an argv array or a command string,
 * `apply_patch` with a patch envelope (also run through the shell as `apply_patch '…'`),
 * `update_plan` with the plan.
 */

const SHELLS = new Set(['shell', 'container.exec', 'local_shell', 'exec_command', 'shell_command', 'unified_exec']);

function patchEffects(patch: string): CallEffects {
  return effects({ files: patchFileEffects(patch) });
}

export function codexEffects(call: ToolCall): CallEffects | null {
  const input = call.input;
  if (SHELLS.has(call.tool)) {
    const raw = input['command'] ?? input['cmd'];
    const argv = Array.isArray(raw) ? raw : null;
    if (argv?.[0] === 'apply_patch' && typeof argv[1] === 'string') return patchEffects(argv[1]);
    const script = shellScript(raw);
    if (script === null) return NO_EFFECTS;
    if (/^\s*apply_patch\b/.test(script) && isPatchEnvelope(script)) return patchEffects(script);
    return effects({ command: script, files: shellFileEffects(script), filesNeedSuccess: false });
  }
  if (call.tool === 'apply_patch') {
    const patch = stringField(input, 'input', 'patch', 'diff');
    return patch === undefined ? NO_EFFECTS : patchEffects(patch);
  }
  if (call.tool === 'update_plan') return effects({ tasks: taskItems(input) });
  return null;
}
