import { costUsd, findModel } from '../../../src/llm/models.js';
import type { CallRecord, CallUsage } from '../../../src/llm-sim/state.js';

/**
 * What calls cost: each call's usage as llm-sim billed it (uncached input, cache read,
 * cache write, output) at the registry's list prices for the call's model.
 */

export interface PricedCalls {
  calls: number;
  usd: number;
  tokens: CallUsage;
}

export function callCostUsd(call: Pick<CallRecord, 'model' | 'usage'>): number {
  const { input, cacheRead, cacheWrite, output } = call.usage;
  return costUsd(call.model, { inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite });
}

export function priceCalls(calls: readonly Pick<CallRecord, 'model' | 'usage'>[]): PricedCalls {
  const tokens: CallUsage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  let usd = 0;
  for (const call of calls) {
    usd += callCostUsd(call);
    tokens.input += call.usage.input;
    tokens.cacheRead += call.usage.cacheRead;
    tokens.cacheWrite += call.usage.cacheWrite;
    tokens.output += call.usage.output;
  }
  return { calls: calls.length, usd, tokens };
}

/** The share of the input read from the cache (0 when there was no input). */
export function cacheReadShare(tokens: CallUsage): number {
  const input = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  return input === 0 ? 0 : tokens.cacheRead / input;
}

/** USD per usage field over the calls: where the money went. */
export function costByPart(calls: readonly Pick<CallRecord, 'model' | 'usage'>[]): CallUsage {
  const out: CallUsage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  for (const call of calls) {
    const prices = findModel(call.model)?.prices;
    if (prices === undefined) continue;
    out.input += (call.usage.input * prices.input) / 1_000_000;
    out.cacheRead += (call.usage.cacheRead * prices.cacheRead) / 1_000_000;
    out.cacheWrite += (call.usage.cacheWrite * prices.cacheWrite) / 1_000_000;
    out.output += (call.usage.output * prices.output) / 1_000_000;
  }
  return out;
}
