import type { CallEffects } from '../effects.js';
import type { ToolCall } from '../tool-calls.js';
import { claudeCodeEffects } from './claude-code.js';
import { codexEffects } from './codex.js';
import { genericEffects } from './generic.js';
import { openHandsEffects } from './openhands.js';

/** Each agent's tool conventions in turn; the first that knows the tool's name reads it, the generic fallback last. */
const KNOWN: ReadonlyArray<(call: ToolCall) => CallEffects | null> = [claudeCodeEffects, codexEffects, openHandsEffects];

export function callEffects(call: ToolCall): CallEffects {
  for (const extract of KNOWN) {
    const found = extract(call);
    if (found !== null) return found;
  }
  return genericEffects(call);
}
