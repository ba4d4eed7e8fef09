import type { HistoryMessage } from '../types.js';

/**
 * Atomic units of a history (SPEC §4). A tool exchange (an assistant message with tool
 * calls plus every message answering them, however spread out) is one unit, and so is
 * everything between its first and last message, so a unit is always a contiguous run
 * of messages and can be kept or compressed whole. Providers reject a tool result whose
 * call is missing, and splitting an exchange is the classic way to produce one.
 */

export type UnitKind = 'message' | 'tool_exchange' | 'orphan_result' | 'clip_archive';

export interface Unit {
  /** position among the units, chronological */
  index: number;
  kind: UnitKind;
  messages: HistoryMessage[];
  seqs: number[];
  /** index of the first / last message in the grouped array (inclusive) */
  start: number;
  end: number;
  /** active-history tokens of all its messages */
  tokens: number;
  /** tool calls of this unit that no message answers */
  unansweredIds: string[];
  /** the trailing exchange still waits for tool results: it is never compressed */
  pending: boolean;
}

/** The unanswered calls of most units: one frozen empty list (a mutation throws rather than reaching every unit). */
const NO_IDS: string[] = Object.freeze([]) as unknown as string[];

/** For each message index, the last index of a message answering one of its tool calls. */
function closingIndexes(messages: readonly HistoryMessage[]): { close: number[]; answered: Set<string> } {
  const close = messages.map((_, i) => i);
  const opener = new Map<string, number>();
  const answered = new Set<string>();
  messages.forEach((message, j) => {
    for (const id of message.toolResultIds) {
      const i = opener.get(id);
      if (i === undefined) continue;
      answered.add(id);
      close[i] = Math.max(close[i] ?? i, j);
    }
    // registered after the results so a message never answers its own calls
    for (const id of message.toolUseIds) if (!opener.has(id)) opener.set(id, j);
  });
  return { close, answered };
}

function hasKnownResult(message: HistoryMessage, opened: ReadonlySet<string>): boolean {
  return message.toolResultIds.some((id) => opened.has(id));
}

/**
 * Groups messages (in seq order) into units. Tool results answering nothing earlier in
 * the history become `orphan_result` units; a clip-archive message is its own unit.
 */
export function groupUnits(messages: readonly HistoryMessage[]): Unit[] {
  const { close, answered } = closingIndexes(messages);
  const units: Unit[] = [];
  const opened = new Set<string>();
  let i = 0;
  while (i < messages.length) {
    const lead = messages[i] as HistoryMessage;
    let end = close[i] ?? i;
    for (let k = i + 1; k <= end; k += 1) end = Math.max(end, close[k] ?? k);
    const group = messages.slice(i, end + 1);
    const kind: UnitKind =
      lead.kind === 'clip_archive'
        ? 'clip_archive'
        : lead.toolUseIds.length > 0 || end > i
          ? 'tool_exchange'
          : lead.toolResultIds.length > 0 && !hasKnownResult(lead, opened)
            ? 'orphan_result'
            : 'message';
    // one pass, no array per message: a unit per message of a 100,000-message history made
    // planning allocate ~640 bytes a message here (flatMap and filter arrays, mostly empty)
    const seqs = group.map((m) => m.seq);
    let tokens = 0;
    let unansweredIds: string[] = NO_IDS;
    for (const message of group) {
      tokens += message.tokens;
      for (const id of message.toolUseIds) {
        opened.add(id);
        if (answered.has(id)) continue;
        if (unansweredIds === NO_IDS) unansweredIds = [];
        unansweredIds.push(id);
      }
    }
    units.push({
      index: units.length,
      kind,
      messages: group,
      seqs,
      start: i,
      end,
      tokens,
      unansweredIds,
      pending: false,
    });
    i = end + 1;
  }
  const last = units.at(-1);
  if (last && last.unansweredIds.length > 0) last.pending = true;
  return units;
}
