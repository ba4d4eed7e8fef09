/**
 * A command as the ledger names it: its first line that does something (comment lines and
 * blank lines skipped), whitespace collapsed, capped at a word boundary. The same command
 * run twice has the same name, which is how a later success resolves an earlier error.
 */

export const MAX_COMMAND_CHARS = 200;

export function capLine(line: string, max: number): string {
  if (line.length <= max) return line;
  const space = line.lastIndexOf(' ', max - 1);
  return `${line.slice(0, space > max / 2 ? space : max - 1)}…`;
}

export function commandLine(command: string): string | null {
  const lines = command.split('\n').map((l) => l.trim());
  const first = lines.find((l) => l.length > 0 && !l.startsWith('#')) ?? lines.find((l) => l.length > 0);
  if (first === undefined) return null;
  return capLine(first.replace(/\s+/g, ' '), MAX_COMMAND_CHARS);
}

/** A shell word as it would be typed back (quoted when it holds anything special). */
function quoteWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The script a command field holds: a string as is; an argv array (Codex `shell`) as the
 * script a `bash -lc` wrapper carries, else its words joined the way a shell reads them.
 */
export function shellScript(value: unknown): string | null {
  if (typeof value === 'string') return value.trim().length > 0 ? value : null;
  if (!Array.isArray(value) || value.length === 0 || !value.every((w) => typeof w === 'string')) return null;
  const words = value;
  const shell = (words[0] ?? '').split('/').pop() ?? '';
  if (['bash', 'sh', 'zsh', 'dash'].includes(shell) && words.length >= 3 && /^-\w*c$/.test(words[1] as string)) return words[2] as string;
  return words.map(quoteWord).join(' ');
}
