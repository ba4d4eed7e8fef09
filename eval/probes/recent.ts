import type { Step } from './steps.js';

/**
 * The last commands of a span, as an agent picking the work up would need them to avoid
 * running them again: the last `max` distinct commands that ran, oldest first, each named by
 * its first line that does something (a comment line above it is not the command),
 * whitespace collapsed. A call the user turned down, keys sent to a running process
 * (OpenHands' `is_input`) and a shell block in prose that nothing answered ran no command.
 */

export const MAX_RECENT_COMMANDS = 5;
const MAX_LINE = 300;

/** mini-swe-agent's submission: the harness ran the command and ended the run with its output. */
const SUBMIT_MARKER = 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT';
const DECLINED = /^(?:The user doesn't want to (?:proceed with this tool use|take this action)|\[Request interrupted by user)/;

function ran(step: Step): boolean {
  const keys = step.input['is_input'];
  if (keys === true || keys === 'true') return false;
  // a shell block in prose ran when the harness answered it, or submitted the run with its output;
  // in a tool-calling agent's reply it is an example, not an action
  if (step.tool === 'shell' && step.result === null) return step.command?.includes(SUBMIT_MARKER) === true;
  return !(step.result !== null && DECLINED.test(step.result.text.trimStart()));
}

/** The line that names a command: its first line that is not blank or a comment. */
export function commandName(command: string): string | null {
  const lines = command.split('\n').map((line) => line.trim());
  const first = lines.find((line) => line.length > 0 && !line.startsWith('#')) ?? lines.find((line) => line.length > 0);
  if (first === undefined) return null;
  const squashed = first.replace(/\s+/g, ' ');
  return squashed.length <= MAX_LINE ? squashed : squashed.slice(0, MAX_LINE);
}

/** The last `max` distinct commands of the span's steps, oldest first. */
export function lastCommands(steps: readonly Step[], max = MAX_RECENT_COMMANDS): string[] {
  const out: string[] = [];
  for (let i = steps.length - 1; i >= 0 && out.length < max; i -= 1) {
    const step = steps[i] as Step;
    if (step.command === null || !ran(step)) continue;
    const name = commandName(step.command);
    if (name !== null && !out.includes(name)) out.unshift(name);
  }
  return out;
}
