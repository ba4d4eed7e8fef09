import type { FileEffect } from './effects.js';
import { type SimpleCommand, simpleCommands } from './shell-words.js';

/**
 * The files a shell command line touches, read from the programs agents use to look at and
 * change files: `sed -i`, output redirections, `tee`, `touch`, `cp`, `mv`, `rm`, `git
 * checkout/restore/rm/mv`, and the pagers and printers that read (`cat`, `nl`, `head`…).
 * Scripts run by an interpreter change files this cannot see; their command line is still
 * in the ledger's commands.
 */

const READERS = new Set(['cat', 'nl', 'head', 'tail', 'less', 'more', 'bat', 'wc']);
/** Options of the readers that take a value as the next word. */
const VALUE_OPTIONS = new Set(['-n', '-c', '-b', '-s', '-v', '-w', '-i', '--lines', '--bytes']);

/** A word that names a file: no option, glob, expansion or device. */
export function isFileWord(word: string): boolean {
  if (word.length === 0 || word.startsWith('-') || word === '.' || word === '..' || word === '/' || word === '~') return false;
  if (/[*?[\]{}$`()<>|;&=\s]/.test(word) || /^\d+$/.test(word) || word.startsWith('/dev/') || word.startsWith('/proc/')) return false;
  return /[\w]/.test(word);
}

function operands(words: readonly string[], valueOptions: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  let literal = false;
  for (let i = 1; i < words.length; i += 1) {
    const word = words[i] as string;
    if (!literal && word === '--') literal = true;
    else if (!literal && word.startsWith('-')) {
      if (valueOptions.has(word)) i += 1;
    } else out.push(word);
  }
  return out;
}

function sedEffects(words: readonly string[]): FileEffect[] {
  const inPlace = words.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place'));
  // the script is the first operand unless given with -e / -f
  const hasScriptOption = words.some((w) => w === '-e' || w === '-f' || w === '--expression' || w === '--file');
  const args = operands(words, new Set(['-e', '-f', '--expression', '--file', '-l']));
  const files = (hasScriptOption ? args : args.slice(1)).filter(isFileWord);
  return files.map((path) => (inPlace ? { path, action: 'edited', gist: 'via sed -i' } : { path, action: 'read' }));
}

function moveEffects(sources: readonly string[], destination: string, gist: string): FileEffect[] {
  const intoDirectory = sources.length > 1 || destination.endsWith('/');
  return sources.flatMap((source) => {
    const base = source.split('/').pop() ?? source;
    const to = intoDirectory ? `${destination.replace(/\/+$/, '')}/${base}` : destination;
    return [
      { path: source, action: 'moved', movedTo: to },
      { path: to, action: 'created', gist: `${gist} from ${source}` },
    ] satisfies FileEffect[];
  });
}

function gitEffects(words: readonly string[]): FileEffect[] {
  const sub = words[1];
  const args = operands(words.slice(1)).filter(isFileWord);
  switch (sub) {
    case 'checkout':
    case 'restore':
      // `git checkout main` switches branches; a path with an extension is a file being reverted
      return args.filter((a) => /\.[A-Za-z0-9]+$/.test(a)).map((path) => ({ path, action: 'edited', gist: `reverted via git ${sub}` }));
    case 'rm':
      return args.map((path) => ({ path, action: 'deleted' }));
    case 'mv': {
      const destination = args[args.length - 1];
      return args.length >= 2 && destination !== undefined ? moveEffects(args.slice(0, -1), destination, 'moved via git mv') : [];
    }
    default:
      return [];
  }
}

function programEffects(command: SimpleCommand): FileEffect[] {
  const words = command.words;
  const program = (words[0] ?? '').split('/').pop() ?? '';
  switch (program) {
    case 'sed':
      return sedEffects(words);
    case 'rm':
    case 'unlink':
      return operands(words)
        .filter(isFileWord)
        .map((path) => ({ path, action: 'deleted' }));
    case 'touch':
      return operands(words, new Set(['-d', '-t', '-r']))
        .filter(isFileWord)
        .map((path) => ({ path, action: 'created', gist: 'via touch' }));
    case 'tee': {
      const append = words.some((w) => w === '-a' || w === '--append');
      return operands(words)
        .filter(isFileWord)
        .map((path) => (append ? { path, action: 'edited', gist: 'via tee -a' } : { path, action: 'created', gist: 'via tee' }));
    }
    case 'mv':
    case 'cp': {
      const args = operands(words, new Set(['-t', '-S', '--target-directory'])).filter(isFileWord);
      const destination = args[args.length - 1];
      if (args.length < 2 || destination === undefined) return [];
      if (program === 'mv') return moveEffects(args.slice(0, -1), destination, 'moved');
      const sources: FileEffect[] = args.slice(0, -1).map((path) => ({ path, action: 'read' }));
      return args.length === 2 && !destination.endsWith('/')
        ? [...sources, { path: destination, action: 'created', gist: `copied from ${args[0] as string}` }]
        : sources;
    }
    case 'git':
      return gitEffects(words);
    default:
      return READERS.has(program)
        ? operands(words, VALUE_OPTIONS)
            .filter(isFileWord)
            .map((path) => ({ path, action: 'read' }))
        : [];
  }
}

export function shellFileEffects(script: string): FileEffect[] {
  return simpleCommands(script).flatMap((command) => {
    const program = (command.words[0] ?? '').split('/').pop() ?? '';
    const via = program === '' ? 'via >' : `via ${program} >`;
    const redirected: FileEffect[] = command.outputs
      .filter((o) => isFileWord(o.path))
      .map((o) => (o.append ? { path: o.path, action: 'edited', gist: `${via}>` } : { path: o.path, action: 'created', gist: via }));
    return [...programEffects(command), ...redirected];
  });
}
