/**
 * Progress for long-running CLI work, on stderr so stdout stays clean for results. On a
 * terminal it redraws one bar in place; anywhere else (pipes, CI logs, tests) it degrades
 * to plain lines: the first update, every tenth of the way, each change of note, the end.
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
  columns?: number | undefined;
}

export interface ProgressOptions {
  label: string;
  /** unit of the counts, e.g. `messages`, `chunks` */
  unit: string;
  stream?: ProgressStream;
  /** default: the stream's isTTY */
  tty?: boolean;
  now?: () => number;
}

export interface Progress {
  /** `total` 0 means "not known yet": only the note is shown */
  update(done: number, total: number, note?: string): void;
  /** ends the bar with a final line */
  finish(message: string): void;
}

const BAR_WIDTH = 24;
const REDRAW_EVERY_MS = 80;

/** `[██████░░░░]` for done/total; an unknown total renders as an empty bar. */
export function renderBar(done: number, total: number, width = BAR_WIDTH): string {
  const ratio = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
  const filled = Math.round(ratio * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}

export function formatCounts(done: number, total: number, unit: string): string {
  if (total <= 0) return '';
  const percent = Math.floor((Math.min(done, total) / total) * 100);
  return `${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit} (${percent}%)`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  const now = options.now ?? Date.now;
  const started = now();
  let lastDraw = -Infinity;
  let lastDecile = -1;
  let lastNote: string | undefined;

  const line = (done: number, total: number, note: string | undefined) =>
    [options.label, tty && total > 0 ? renderBar(done, total) : '', formatCounts(done, total, options.unit), note ? `· ${note}` : '']
      .filter((part) => part !== '')
      .join(' ');

  const draw = (text: string) => {
    // Cut to the terminal width so a long note never wraps and breaks the in-place redraw.
    const width = stream.columns || 100;
    stream.write(`\r\x1b[2K${text.length > width - 1 ? `${text.slice(0, width - 2)}…` : text}`);
  };

  return {
    update(done, total, note) {
      if (tty) {
        if (now() - lastDraw < REDRAW_EVERY_MS && note === lastNote) return;
        lastDraw = now();
        lastNote = note;
        draw(line(done, total, note));
        return;
      }
      const decile = total > 0 ? Math.floor((Math.min(done, total) / total) * 10) : -1;
      if (decile === lastDecile && note === lastNote) return;
      lastDecile = decile;
      lastNote = note;
      stream.write(`${line(done, total, note)}\n`);
    },
    finish(message) {
      const text = `${options.label} ${message} (${formatDuration(now() - started)})`;
      if (tty) {
        draw(text);
        stream.write('\n');
      } else {
        stream.write(`${text}\n`);
      }
    },
  };
}
