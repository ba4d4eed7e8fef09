import type { Policy } from '../../config/policy.js';
import type { Strategy } from '../plan-types.js';
import { isUserTextMessage } from '../render.js';
import type { HistoryMessage } from '../types.js';
import type { Unit } from './units.js';

/**
 * Splits units into protected ones and compression candidates (SPEC §5.2 steps 2–3, §5.6a).
 * Protected: the leading system prompt(s) and the clip-archive (head), the recent tail
 * extended back to a unit boundary, the unit holding the newest user message, units holding
 * a pinned message, a pending exchange, user messages within `keepUserTokens` and the newest
 * `keepImages` images the user sent. A unit
 * is protected whole, so a pinned tool result keeps its call and the call its results.
 */

export interface Split {
  /** leading system prompts and the clip-archive */
  head: Unit[];
  /** index (into units) where the protected recent tail starts; units.length when there is none */
  tailStart: number;
  /** protected outside the tail: newest user message, pinned messages, pending exchange, keepUserTokens, keepImages */
  pinned: Unit[];
  /** everything else, chronological */
  candidates: Unit[];
}

export interface SplitOptions {
  strategy: Strategy;
  keepRecent: number;
  keepRecentTokens: number | undefined;
  /** the most tokens a `keepRecent` tail may hold: a share of the target, when there is one */
  maxTailTokens: number | undefined;
  keepUserTokens: number;
  keepImages: number;
}

/**
 * The share of a compaction's target that a message-counted tail may fill. The rest holds the
 * system prompt, the clip-archive and the pinned messages; a tail of twelve big file reads
 * would otherwise stay whole, leave the compaction far over its target and be paid for by
 * every later agent call (SPEC §5.10).
 */
export const TAIL_SHARE_OF_TARGET = 0.5;

/** `target`: the plan's projected-token goal (`resolveTarget`), null when it has none. */
export function splitOptions(policy: Policy, strategy: Strategy, keepRecent: number | undefined, target: number | null): SplitOptions {
  const keepRecentTokens = keepRecent === undefined ? policy.keepRecentTokens : undefined;
  return {
    strategy,
    keepRecent: keepRecent ?? policy.keepRecent,
    // an explicit per-request message count wins over a token-sized tail
    keepRecentTokens,
    // an explicit count or token size is the caller's choice; the default count yields to the target
    maxTailTokens:
      keepRecent === undefined && keepRecentTokens === undefined && target !== null ? Math.floor(target * TAIL_SHARE_OF_TARGET) : undefined,
    keepUserTokens: policy.keepUserTokens,
    keepImages: policy.keepImages,
  };
}

function headLength(units: readonly Unit[]): number {
  let n = 0;
  while (n < units.length) {
    const unit = units[n] as Unit;
    const lead = unit.messages[0];
    const isSystemPrompt = unit.kind === 'message' && lead?.role === 'system';
    if (!isSystemPrompt && unit.kind !== 'clip_archive') break;
    n += 1;
  }
  return n;
}

/** Index of the first message of the protected tail, before unit alignment. */
function tailMessageIndex(messages: readonly HistoryMessage[], options: SplitOptions): number {
  if (options.strategy === 'reset') return messages.length;
  if (options.keepRecentTokens !== undefined) {
    let tokens = 0;
    let i = messages.length;
    while (i > 0 && tokens < options.keepRecentTokens) {
      i -= 1;
      tokens += messages[i]?.tokens ?? 0;
    }
    return i;
  }
  const start = Math.max(0, messages.length - options.keepRecent);
  if (options.maxTailTokens === undefined || start >= messages.length) return start;
  // newest first while within the cap; the newest message stays whatever its size
  let i = messages.length - 1;
  let tokens = messages[i]?.tokens ?? 0;
  while (i > start && tokens + (messages[i - 1]?.tokens ?? 0) <= options.maxTailTokens) {
    i -= 1;
    tokens += messages[i]?.tokens ?? 0;
  }
  return Math.max(0, i);
}

function unitIndexOfMessage(units: readonly Unit[], messageIndex: number): number {
  const found = units.findIndex((unit) => unit.end >= messageIndex);
  return found === -1 ? units.length : found;
}

/** Units holding the newest user message and, newest first, user messages within the budget. */
function userPinned(units: readonly Unit[], keepUserTokens: number): Set<number> {
  const pinned = new Set<number>();
  let budget = keepUserTokens;
  let newestSeen = false;
  for (let u = units.length - 1; u >= 0; u -= 1) {
    const unit = units[u] as Unit;
    for (let m = unit.messages.length - 1; m >= 0; m -= 1) {
      const message = unit.messages[m] as HistoryMessage;
      if (!isUserTextMessage(message)) continue;
      if (!newestSeen) {
        newestSeen = true;
        pinned.add(unit.index);
      } else if (message.tokens <= budget) {
        budget -= message.tokens;
        pinned.add(unit.index);
      } else {
        budget = 0;
      }
    }
    if (newestSeen && budget === 0) break;
  }
  return pinned;
}

/** A user message's own images: the planner's feature (its content is not loaded), else counted in its content. */
function userImages(message: HistoryMessage): number {
  if (message.role !== 'user') return 0;
  return message.features?.userImages ?? message.content.filter((block) => block.type === 'image').length;
}

/** Units holding the newest `keepImages` images the user sent (not those of tool results), newest first. */
function imagePinned(units: readonly Unit[], keepImages: number): Set<number> {
  const pinned = new Set<number>();
  let left = keepImages;
  for (let u = units.length - 1; u >= 0 && left > 0; u -= 1) {
    const unit = units[u] as Unit;
    const images = unit.messages.reduce((n, message) => n + userImages(message), 0);
    if (images === 0) continue;
    pinned.add(unit.index);
    left -= images;
  }
  return pinned;
}

const isPinned = (message: HistoryMessage): boolean => message.pinned === true;

/** Splits grouped units; `messages` is the array the units were grouped from. */
export function splitUnits(units: readonly Unit[], messages: readonly HistoryMessage[], options: SplitOptions): Split {
  const headEnd = headLength(units);
  let tailStart = Math.max(headEnd, unitIndexOfMessage(units, tailMessageIndex(messages, options)));
  // a kept tail must never open with a tool result whose call is gone
  while (tailStart < units.length && units[tailStart]?.kind === 'orphan_result') tailStart += 1;

  const pinnedIndexes = userPinned(units, options.keepUserTokens);
  for (const index of imagePinned(units, options.keepImages)) pinnedIndexes.add(index);
  for (const unit of units) if (unit.pending || unit.messages.some(isPinned)) pinnedIndexes.add(unit.index);

  const pinned: Unit[] = [];
  const candidates: Unit[] = [];
  for (let u = headEnd; u < tailStart; u += 1) {
    const unit = units[u] as Unit;
    if (unit.kind === 'clip_archive') continue; // superseded or carried, never summarized
    if (pinnedIndexes.has(unit.index)) pinned.push(unit);
    else candidates.push(unit);
  }
  return { head: units.slice(0, headEnd), tailStart, pinned, candidates };
}
