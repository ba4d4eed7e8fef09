import type { FileAction, TaskList } from './schema.js';

/** What one tool call did to a file, as its input (or its command line) says. */
export interface FileEffect {
  path: string;
  action: FileAction;
  gist?: string;
  movedTo?: string;
}

/**
 * What an extractor reads off one tool call, before its outcome is known: the files it
 * touched, the command it ran, the todo list it wrote, and what an error of it would be about.
 */
export interface CallEffects {
  files: FileEffect[];
  /** the command text a shell tool ran (its first line becomes the ledger's key) */
  command: string | null;
  tasks: TaskList['items'] | null;
  /**
   * A structured file tool (Edit, str_replace_editor, apply_patch…) changes nothing when it
   * fails; a shell line may have done its edits before the part that failed.
   */
  filesNeedSuccess: boolean;
}

export const NO_EFFECTS: CallEffects = { files: [], command: null, tasks: null, filesNeedSuccess: true };

export function effects(parts: Partial<CallEffects>): CallEffects {
  return { ...NO_EFFECTS, ...parts };
}
