import type { Policy } from '../../config/policy.js';
import type { PlanRewrite } from '../plan-types.js';
import { toolNamesOf, toolResultText } from '../render.js';
import { truncateMiddle } from '../text.js';
import type { Block, CountTokens, HistoryMessage, ToolResultBlock } from '../types.js';
import type { Unit } from './units.js';

/**
 * Mechanical tiers (SPEC §5.2 step 5, seed 000). Tier 1 truncates oversized tool outputs
 * to head + tail around a marker; Tier 2 replaces old tool outputs with a placeholder.
 * Both name the archived original (its seq) so nothing looks silently lost, and both keep
 * the block a `tool_result` with the same `tool_use_id`, so pairing stays valid.
 */

export function truncationMarker(omittedTokens: number, seq: number): string {
  return `[… ${omittedTokens} tokens truncated; the full output is archived with message seq ${seq} …]`;
}

export function maskPlaceholder(toolName: string, tokens: number, seq: number): string {
  return `[output of ${toolName} masked to save context: ${tokens} tokens archived with message seq ${seq}; search the archive to recall it]`;
}

function withText(block: ToolResultBlock, text: string): ToolResultBlock {
  const next: ToolResultBlock = { type: 'tool_result', tool_use_id: block.tool_use_id, content: text };
  if (block.is_error !== undefined) next.is_error = block.is_error;
  return next;
}

function rewrite(
  message: HistoryMessage,
  reason: PlanRewrite['reason'],
  content: Block[],
  tokensBefore: number,
  blockDelta: number,
): PlanRewrite {
  // message.tokens may be a provider count: apply the block-level difference to it
  return { seq: message.seq, reason, content, tokensBefore, tokensAfter: Math.max(1, tokensBefore - blockDelta) };
}

/** Tier 1 for one message, or null when none of its tool outputs exceeds `tier1.maxTokens`. */
function truncateMessage(message: HistoryMessage, policy: Policy, countTokens: CountTokens): PlanRewrite | null {
  const { maxTokens, headTokens, tailTokens } = policy.tier1;
  let delta = 0;
  const content = message.content.map((block) => {
    if (block.type !== 'tool_result') return block;
    const text = toolResultText(block);
    const before = countTokens(text);
    if (before <= maxTokens) return block;
    const cut = truncateMiddle(text, headTokens, tailTokens, countTokens, (n) => truncationMarker(n, message.seq));
    delta += before - countTokens(cut);
    return withText(block, cut);
  });
  return delta > 0 ? rewrite(message, 'truncated', content, message.tokens, delta) : null;
}

/** Tier 1 over the candidate units: seq → rewrite. */
export function truncateOversized(units: readonly Unit[], policy: Policy, countTokens: CountTokens): Map<number, PlanRewrite> {
  const rewrites = new Map<number, PlanRewrite>();
  for (const unit of units) {
    for (const message of unit.messages) {
      const result = truncateMessage(message, policy, countTokens);
      if (result) rewrites.set(message.seq, result);
    }
  }
  return rewrites;
}

/** A possible Tier 2 rewrite and what it saves relative to the message's current state. */
export interface MaskOption {
  unitIndex: number;
  rewrite: PlanRewrite;
  /** the state it replaces (a Tier 1 rewrite) or null for the original */
  previous: PlanRewrite | null;
  savingTokens: number;
}

function maskMessage(
  message: HistoryMessage,
  current: PlanRewrite | null,
  names: ReadonlyMap<string, string>,
  policy: Policy,
  countTokens: CountTokens,
): PlanRewrite | null {
  const blocks = current?.content ?? message.content;
  let delta = 0;
  const content = blocks.map((block) => {
    if (block.type !== 'tool_result') return block;
    const before = countTokens(toolResultText(block));
    if (before < policy.tier2.minTokens) return block;
    const placeholder = maskPlaceholder(names.get(block.tool_use_id) ?? 'a tool', before, message.seq);
    const saved = before - countTokens(placeholder);
    if (saved <= 0) return block;
    delta += saved;
    return withText(block, placeholder);
  });
  const tokensBefore = current?.tokensAfter ?? message.tokens;
  if (delta <= 0) return null;
  const masked = rewrite(message, 'masked', content, tokensBefore, delta);
  return { ...masked, tokensBefore: message.tokens };
}

/**
 * Tier 2 options over the candidate units, oldest first: masking the oldest tool outputs
 * costs the least context the agent still needs.
 */
export function maskOptions(
  units: readonly Unit[],
  truncated: ReadonlyMap<number, PlanRewrite>,
  policy: Policy,
  countTokens: CountTokens,
): MaskOption[] {
  const options: MaskOption[] = [];
  for (const unit of units) {
    const names = toolNamesOf(unit.messages);
    for (const message of unit.messages) {
      const previous = truncated.get(message.seq) ?? null;
      const masked = maskMessage(message, previous, names, policy, countTokens);
      if (!masked) continue;
      const savingTokens = (previous?.tokensAfter ?? message.tokens) - masked.tokensAfter;
      if (savingTokens > 0) options.push({ unitIndex: unit.index, rewrite: masked, previous, savingTokens });
    }
  }
  return options;
}
