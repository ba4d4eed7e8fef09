import type {
  Ledger,
  LedgerAgent,
  LedgerCommand,
  LedgerError,
  LedgerFile,
  LedgerImage,
  LedgerOkCall,
  SeqText,
  TaskList,
} from './schema.js';
import { FILE_ACTIONS, SENTENCES_KEPT } from './schema.js';

/**
 * The one place where ledger entries combine, used both to build a ledger from its calls and
 * to merge two ledgers, so both agree exactly. Entries are keyed (a file by path, a command by
 * its line, an error by tool, target and line, a sentence by its text); counts add, seqs take
 * the maximum, and what describes the latest event (a command's outcome, a file's gist) comes
 * from the entry with the higher seq, the later one added on a tie. Errors are resolved at the
 * end against the latest success of their command or of their tool on their target, which
 * the ledger keeps for that purpose (commands' lastOkSeq, okCalls).
 */

const SEP = '\u0000';

export function errorKey(e: Pick<LedgerError, 'tool' | 'targetKind' | 'target' | 'line'>): string {
  return [e.tool, e.targetKind, e.target, e.line].join(SEP);
}

const agentKey = (a: Pick<LedgerAgent, 'seq' | 'task'>): string => `${a.seq}${SEP}${a.task}`;

export function okCallKey(c: Pick<LedgerOkCall, 'tool' | 'targetKind' | 'target'>): string {
  return [c.tool, c.targetKind, c.target].join(SEP);
}

const later = (a: number | undefined, b: number | undefined) => b !== undefined && (a === undefined || b >= a);
const maxSeq = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

function mergeFile(a: LedgerFile, b: LedgerFile): LedgerFile {
  const actions: LedgerFile['actions'] = {};
  for (const action of FILE_ACTIONS) {
    const count = (a.actions[action] ?? 0) + (b.actions[action] ?? 0);
    if (count > 0) actions[action] = count;
  }
  const change = later(a.changedSeq, b.changedSeq) ? b : a;
  const merged: LedgerFile = { path: a.path, actions, lastSeq: Math.max(a.lastSeq, b.lastSeq) };
  if (change.changedSeq !== undefined) merged.changedSeq = change.changedSeq;
  if (change.lastChange !== undefined) merged.lastChange = change.lastChange;
  if (change.gist !== undefined) merged.gist = change.gist;
  if (change.movedTo !== undefined) merged.movedTo = change.movedTo;
  return merged;
}

/** Which of two runs came later: by seq, then by place among the calls of one message. */
function byRun(x: Pick<LedgerCommand, 'lastSeq' | 'lastAt'>, y: Pick<LedgerCommand, 'lastSeq' | 'lastAt'>): number {
  return x.lastSeq - y.lastSeq || (x.lastAt ?? 0) - (y.lastAt ?? 0);
}

function mergeCommand(a: LedgerCommand, b: LedgerCommand): LedgerCommand {
  const latest = byRun(b, a) >= 0 ? b : a;
  const merged: LedgerCommand = { line: a.line, outcome: latest.outcome, count: a.count + b.count, lastSeq: latest.lastSeq };
  if (latest.lastAt !== undefined) merged.lastAt = latest.lastAt;
  if (latest.exitCode !== undefined) merged.exitCode = latest.exitCode;
  const ok = maxSeq(a.lastOkSeq, b.lastOkSeq);
  if (ok !== undefined) merged.lastOkSeq = ok;
  return merged;
}

function bySeqThen<T extends { seq?: number; lastSeq?: number }>(key: (item: T) => string) {
  return (x: T, y: T) => {
    const sx = x.lastSeq ?? x.seq ?? 0;
    const sy = y.lastSeq ?? y.seq ?? 0;
    if (sx !== sy) return sx - sy;
    const kx = key(x);
    const ky = key(y);
    return kx < ky ? -1 : kx > ky ? 1 : 0;
  };
}

/** Sentences by seq, those of one message in the order said. */
function bySentence(x: SeqText, y: SeqText): number {
  return x.seq - y.seq || (x.at ?? 0) - (y.at ?? 0) || (x.text < y.text ? -1 : x.text > y.text ? 1 : 0);
}

export class LedgerAccumulator {
  private readonly files = new Map<string, LedgerFile>();
  private readonly commands = new Map<string, LedgerCommand>();
  private readonly errors = new Map<string, LedgerError>();
  private readonly okCalls = new Map<string, LedgerOkCall>();
  private readonly constraints = new Map<string, SeqText>();
  private readonly requests = new Map<string, SeqText>();
  private tasks: TaskList | null = null;
  private readonly images = new Map<string, LedgerImage>();
  private readonly agents = new Map<string, LedgerAgent>();

  addFile(file: LedgerFile): this {
    const known = this.files.get(file.path);
    this.files.set(file.path, known ? mergeFile(known, file) : file);
    return this;
  }

  addCommand(command: LedgerCommand): this {
    const known = this.commands.get(command.line);
    this.commands.set(command.line, known ? mergeCommand(known, command) : command);
    return this;
  }

  addError(error: LedgerError): this {
    const key = errorKey(error);
    const known = this.errors.get(key);
    this.errors.set(key, known ? { ...error, seq: Math.max(known.seq, error.seq) } : error);
    return this;
  }

  addOkCall(call: LedgerOkCall): this {
    const key = okCallKey(call);
    const known = this.okCalls.get(key);
    if (!known || call.seq > known.seq) this.okCalls.set(key, call);
    return this;
  }

  addSentence(kind: 'constraints' | 'requests', sentence: SeqText): this {
    const map = this[kind];
    const known = map.get(sentence.text);
    // the latest saying wins; said twice in one message, its first place
    if (!known || sentence.seq > known.seq || (sentence.seq === known.seq && (sentence.at ?? 0) < (known.at ?? 0)))
      map.set(sentence.text, sentence);
    return this;
  }

  /** One image by its reference: the latest message that holds it wins (the same bytes sent again). */
  addImage(image: LedgerImage): this {
    const known = this.images.get(image.ref);
    if (!known || image.seq >= known.seq) this.images.set(image.ref, image);
    return this;
  }

  /** One sub-agent by its call (seq and task): a later reading of the same call wins. */
  addAgent(agent: LedgerAgent): this {
    this.agents.set(agentKey(agent), agent);
    return this;
  }

  setTasks(tasks: TaskList | null): this {
    if (tasks !== null && (this.tasks === null || tasks.seq >= this.tasks.seq)) this.tasks = tasks;
    return this;
  }

  addLedger(ledger: Ledger): this {
    for (const file of ledger.files) this.addFile(file);
    for (const command of ledger.commands) this.addCommand(command);
    for (const error of ledger.errors) this.addError(error);
    for (const call of ledger.okCalls) this.addOkCall(call);
    for (const sentence of ledger.instructions.constraints) this.addSentence('constraints', sentence);
    for (const sentence of ledger.instructions.requests) this.addSentence('requests', sentence);
    // a ledger stored before images and sub-agents were kept has neither (read raw, unparsed)
    for (const image of ledger.images ?? []) this.addImage(image);
    for (const agent of ledger.agents ?? []) this.addAgent(agent);
    return this.setTasks(ledger.tasks);
  }

  /** The latest success that would resolve this error, if any. */
  private lastSuccess(error: LedgerError): number | undefined {
    if (error.targetKind === 'command') return this.commands.get(error.target)?.lastOkSeq;
    return this.okCalls.get(okCallKey({ tool: error.tool, targetKind: error.targetKind, target: error.target }))?.seq;
  }

  ledger(): Ledger {
    // derived afresh, never carried over: the same error seen again after its fix is open again
    const errors = [...this.errors.values()].map((e) => {
      const ok = this.lastSuccess(e);
      return { ...e, resolved: ok !== undefined && ok > e.seq };
    });
    return {
      files: [...this.files.values()].sort(bySeqThen((f) => f.path)),
      commands: [...this.commands.values()].sort((x, y) => byRun(x, y) || (x.line < y.line ? -1 : x.line > y.line ? 1 : 0)),
      errors: errors.sort(bySeqThen<LedgerError>(errorKey)),
      okCalls: [...this.okCalls.values()].sort(bySeqThen<LedgerOkCall>(okCallKey)),
      // the newest sentences of each kind only: the clip-archive shows a dozen, and every request
      // of a 100,000-message conversation made its merged ledger 10 MB; still exact and
      // associative, as a sentence among the newest of the whole is among the newest of its part
      instructions: {
        constraints: [...this.constraints.values()].sort(bySentence).slice(-SENTENCES_KEPT),
        requests: [...this.requests.values()].sort(bySentence).slice(-SENTENCES_KEPT),
      },
      tasks: this.tasks,
      images: [...this.images.values()].sort(bySeqThen<LedgerImage>((i) => i.ref)),
      agents: [...this.agents.values()].sort(bySeqThen<LedgerAgent>(agentKey)),
    };
  }
}
