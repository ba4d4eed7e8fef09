import type { TaskList, TaskStatus } from '../schema.js';

/**
 * Todo lists as agents keep them: Claude Code's TodoWrite `todos: [{content, status}]`,
 * Codex's update_plan `plan: [{step, status}]`, OpenHands' task_tracker
 * `task_list: [{title, status: todo|in_progress|done}]`, and look-alikes.
 */

const LIST_FIELDS = ['todos', 'plan', 'task_list', 'tasks', 'items'];
const TEXT_FIELDS = ['content', 'step', 'title', 'text', 'description', 'task', 'name'];

function statusOf(value: unknown): TaskStatus {
  const status = typeof value === 'string' ? value.toLowerCase().replace(/[\s-]+/g, '_') : '';
  if (['completed', 'complete', 'done', 'finished'].includes(status)) return 'completed';
  if (['in_progress', 'inprogress', 'doing', 'active', 'started', 'running'].includes(status)) return 'in_progress';
  return 'pending';
}

/** The items of the first list field that holds task-like objects, or null when the input has none. */
export function taskItems(input: Record<string, unknown>): TaskList['items'] | null {
  for (const field of LIST_FIELDS) {
    const list = input[field];
    if (!Array.isArray(list)) continue;
    const items = list.flatMap((entry: unknown) => {
      if (typeof entry !== 'object' || entry === null) return [];
      const record = entry as Record<string, unknown>;
      const text = TEXT_FIELDS.map((f) => record[f]).find((v): v is string => typeof v === 'string' && v.trim().length > 0);
      return text === undefined || !('status' in record) ? [] : [{ text: text.trim(), status: statusOf(record['status']) }];
    });
    if (items.length > 0 || list.length === 0) return items;
  }
  return null;
}
