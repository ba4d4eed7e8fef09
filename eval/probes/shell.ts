/**
 * What a shell command does to files, read the way a reviewer reads it: `rm`, `mv`, `cp`,
 * `touch`, `sed -i`, `perl -i`, `tee` and output redirections. Heredoc bodies are data, not
 * commands; quoting is honoured; anything else is left alone (a probe that is not derived
 * is better than a wrong one).
 */

export type FileAction = 'created' | 'edited' | 'deleted' | 'moved';

export interface ShellFileChange {
  path: string;
  action: FileAction | 'written';
  /** where a move put the file */
  to?: string;
}

const HEREDOC = /<<-?\s*(['"]?)([A-Za-z_][\w-]*)\1/;
const OPERATORS = new Set(['&&', '||', ';', '|', '&', '\n']);

/** The command without heredoc bodies (the line that opens one stays). */
export function withoutHeredocBodies(command: string): string {
  const out: string[] = [];
  let terminator: string | null = null;
  for (const line of command.split('\n')) {
    if (terminator !== null) {
      if (line.trim() === terminator) terminator = null;
      continue;
    }
    out.push(line);
    const match = HEREDOC.exec(line);
    if (match) terminator = match[2] ?? null;
  }
  return out.join('\n');
}

/** Words and operators of a command line, quotes removed. */
export function tokenize(command: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let started = false;
  const flush = () => {
    if (started) tokens.push(current);
    current = '';
    started = false;
  };
  for (let i = 0; i < command.length; i += 1) {
    const ch = command[i] as string;
    const two = command.slice(i, i + 2);
    if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      current += command.slice(i + 1, end === -1 ? command.length : end);
      started = true;
      i = end === -1 ? command.length : end;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < command.length && command[j] !== '"') {
        if (command[j] === '\\' && j + 1 < command.length) j += 1;
        current += command[j];
        j += 1;
      }
      started = true;
      i = j;
    } else if (ch === '\\' && i + 1 < command.length) {
      if (command[i + 1] !== '\n') current += command[i + 1];
      started = true;
      i += 1;
    } else if (two === '&&' || two === '||' || two === '>>') {
      flush();
      tokens.push(two);
      i += 1;
    } else if (ch === '>' || ch === '<' || ch === ';' || ch === '|' || ch === '&' || ch === '\n') {
      // `2>`, `1>`: the descriptor belongs to the redirection
      if (ch === '>' && /^[12]$/.test(current) && started) {
        tokens.push(`${current}>`);
        current = '';
        started = false;
        continue;
      }
      flush();
      tokens.push(ch);
    } else if (ch === ' ' || ch === '\t') {
      flush();
    } else {
      current += ch;
      started = true;
    }
  }
  flush();
  return tokens;
}

/** Simple commands of a command line (words only, operators dropped). */
export function simpleCommands(command: string): string[][] {
  const out: string[][] = [[]];
  for (const token of tokenize(withoutHeredocBodies(command))) {
    if (OPERATORS.has(token)) out.push([]);
    else out[out.length - 1]!.push(token);
  }
  return out.filter((words) => words.length > 0);
}

function isPath(word: string | undefined): word is string {
  return word !== undefined && word.length > 0 && !word.startsWith('-') && !/[*?$`(){}]/.test(word) && !word.startsWith('/dev/');
}

function operands(words: readonly string[]): string[] {
  return words.filter((w) => !w.startsWith('-'));
}

/** `sed -i` / `perl -pi -e`: the files after the script. */
function inPlaceTargets(words: readonly string[]): string[] {
  const out: string[] = [];
  let scriptSeen = false;
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as string;
    if (word === '-e' || word === '--expression' || word === '-f') {
      i += 1;
      scriptSeen = true;
    } else if (word.startsWith('-')) continue;
    else if (!scriptSeen) scriptSeen = true;
    else out.push(word);
  }
  return out;
}

function commandChanges(words: readonly string[]): ShellFileChange[] {
  const out: ShellFileChange[] = [];
  // redirections first: `cmd > file`, `cat <<EOF > file`
  const plain: string[] = [];
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] as string;
    if (word === '>' || word === '1>' || word === '>>') {
      const target = words[i + 1];
      if (isPath(target)) out.push({ path: target, action: word === '>>' ? 'edited' : 'written' });
      i += 1;
    } else if (word === '2>' || word === '<') i += 1;
    else plain.push(word);
  }
  let [name, ...args] = plain;
  if (name === 'sudo' || name === 'command') [name, ...args] = args;
  if (name === 'git' && (args[0] === 'rm' || args[0] === 'mv')) [name, ...args] = args;
  const paths = operands(args).filter(isPath);
  switch (name) {
    case 'rm':
    case 'unlink':
      for (const path of paths) out.push({ path, action: 'deleted' });
      break;
    case 'mv':
      if (paths.length === 2) out.push({ path: paths[0] as string, action: 'moved', to: paths[1] as string });
      break;
    case 'cp':
      if (paths.length === 2) out.push({ path: paths[1] as string, action: 'written' });
      break;
    case 'touch':
      for (const path of paths) out.push({ path, action: 'written' });
      break;
    case 'tee':
      for (const path of paths) out.push({ path, action: args.includes('-a') ? 'edited' : 'written' });
      break;
    case 'sed':
    case 'perl':
      if (args.some((a) => /^-[a-zA-Z]*i/.test(a)))
        for (const path of inPlaceTargets([name, ...args]).filter(isPath)) out.push({ path, action: 'edited' });
      break;
  }
  return out;
}

/** The file changes a command line makes, in order. */
export function shellFileChanges(command: string): ShellFileChange[] {
  return simpleCommands(command).flatMap(commandChanges);
}
