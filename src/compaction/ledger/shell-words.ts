/**
 * Just enough of shell syntax to tell which files a command line touches: words with their
 * quotes removed, control operators that end a simple command, and redirections. Heredoc
 * bodies are data, not commands, so they are dropped before the words are read. Anything
 * fancier (subshells, expansions) stays inside a word and is never taken for a path.
 */

export type ShellToken = { kind: 'word'; text: string } | { kind: 'redirect'; op: string } | { kind: 'end' };

const HEREDOC = /<<-?\s*(['"]?)([A-Za-z_][\w-]*)\1/g;

/** The script without heredoc bodies and with line continuations joined. */
export function withoutHeredocs(script: string): string {
  const out: string[] = [];
  const pending: string[] = [];
  for (const line of script.replace(/\\\r?\n/g, ' ').split('\n')) {
    if (pending.length > 0) {
      if (line.trim() === pending[0]) pending.shift();
      continue;
    }
    out.push(line);
    for (const match of line.matchAll(HEREDOC)) pending.push(match[2] as string);
  }
  return out.join('\n');
}

const OPERATOR_CHARS = new Set([';', '&', '|', '\n', '(', ')']);

/**
 * The tokens of a script (heredoc bodies removed first), or null when a quote is never
 * closed: the line would not run as written, and its words cannot be trusted as paths.
 */
export function shellTokens(script: string): ShellToken[] | null {
  const text = withoutHeredocs(script);
  const tokens: ShellToken[] = [];
  let word = '';
  let inWord = false;
  const flush = () => {
    if (inWord) tokens.push({ kind: 'word', text: word });
    word = '';
    inWord = false;
  };
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i] as string;
    if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) return null;
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\' && j + 1 < text.length) j += 1;
        word += text[j];
        j += 1;
      }
      if (j >= text.length) return null;
      inWord = true;
      i = j;
    } else if (ch === '\\' && i + 1 < text.length) {
      word += text[i + 1];
      inWord = true;
      i += 1;
    } else if (ch === '#' && !inWord) {
      const end = text.indexOf('\n', i);
      i = (end === -1 ? text.length : end) - 1;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      flush();
    } else if (ch === '>' || ch === '<') {
      // `2>`, `&>`: a file descriptor written right before the operator belongs to it
      const fd = /^(?:\d|&)$/.test(word) ? word : '';
      if (fd !== '') {
        word = '';
        inWord = false;
      }
      flush();
      let op = fd + ch;
      while (text[i + 1] === '>' || text[i + 1] === '&' || text[i + 1] === '|' || (op.endsWith('&') && /\d|-/.test(text[i + 1] ?? ''))) {
        op += text[i + 1];
        i += 1;
      }
      tokens.push({ kind: 'redirect', op });
    } else if (OPERATOR_CHARS.has(ch)) {
      flush();
      if (tokens[tokens.length - 1]?.kind !== 'end') tokens.push({ kind: 'end' });
    } else {
      word += ch;
      inWord = true;
    }
  }
  flush();
  return tokens;
}

export interface SimpleCommand {
  /** the words, with leading variable assignments and wrappers (sudo, env, time) removed */
  words: string[];
  /** output redirections to files: `>` and `>|` truncate, `>>` appends */
  outputs: Array<{ path: string; append: boolean }>;
}

const WRAPPERS = new Set(['sudo', 'env', 'time', 'nohup', 'command', 'exec']);

/** The simple commands of a script, in order. */
export function simpleCommands(script: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], outputs: [] };
  const tokens = shellTokens(script);
  if (tokens === null) return [];
  const close = () => {
    while (current.words.length > 0 && (/^[A-Za-z_]\w*=/.test(current.words[0] as string) || WRAPPERS.has(current.words[0] as string)))
      current.words.shift();
    if (current.words.length > 0 || current.outputs.length > 0) commands.push(current);
    current = { words: [], outputs: [] };
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as ShellToken;
    if (token.kind === 'end') close();
    else if (token.kind === 'word') current.words.push(token.text);
    else {
      const next = tokens[i + 1];
      const target = next?.kind === 'word' ? next.text : null;
      if (target !== null) i += 1;
      // `>&2`, `2>&1` and friends duplicate descriptors; `2>` writes stderr (a log, rarely work)
      const toFile = target !== null && !token.op.endsWith('&') && !/^\d*<|^[2-9]/.test(token.op) && !target.startsWith('&');
      if (toFile) current.outputs.push({ path: target, append: token.op.includes('>>') });
    }
  }
  close();
  return commands;
}
