import type { Step } from './steps.js';

/**
 * The open items of the span's latest todo list: Claude Code's `TodoWrite`, Codex's
 * `update_plan`, OpenHands' `task_tracker`. An item is open until its status says done.
 */

const TODO_TOOLS = /^(TodoWrite|todo_write|update_plan|task_tracker)$/i;
const DONE = /^(completed|complete|done|cancelled|canceled)$/i;

function items(step: Step): Array<{ text: string; status: string }> | null {
  if (!TODO_TOOLS.test(step.tool)) return null;
  const list = step.input['todos'] ?? step.input['plan'] ?? step.input['task_list'];
  if (!Array.isArray(list)) return null;
  return list.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const record = item as Record<string, unknown>;
    const text = record['content'] ?? record['step'] ?? record['title'] ?? record['description'];
    return typeof text === 'string' && text.trim().length > 0 ? [{ text: text.trim(), status: String(record['status'] ?? '') }] : [];
  });
}

/** Open items of the latest todo list, in list order; empty when the span has none. */
export function openTasks(steps: readonly Step[]): string[] {
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    const list = items(steps[i] as Step);
    if (list) return list.filter((item) => !DONE.test(item.status)).map((item) => item.text);
  }
  return [];
}
