import Anthropic from '@anthropic-ai/sdk';

import { buildSummarizeRequest } from '../../src/compaction/summarize/index.js';
import type { Block, HistoryMessage, Role } from '../../src/compaction/types.js';
import { type Policy, PolicySchema } from '../../src/config/policy.js';
import { countTokens } from '../../src/lib/count-tokens.js';
import { buildAnthropicParams } from '../../src/llm/anthropic.js';

/**
 * The peer most compaction systems ship: a sequential fold. The same chunks compactd
 * planned, one request at a time in chronological order, each carrying the running summary
 * so far as its previous-summary context, through the same Anthropic SDK and the same prompt
 * builder against the same llm-sim — so the only difference measured is the shape of the work.
 */

export interface FoldResult {
  wallMs: number;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  summary: string;
  /** per call: [start, end] in epoch ms */
  callWindows: Array<[number, number]>;
}

export interface ExportedMessage {
  seq: number;
  role: string;
  kind: string;
  content: unknown[];
}

/** An exported message as the core's HistoryMessage (what the prompt builder renders). */
export function toHistory(message: ExportedMessage): HistoryMessage {
  const content = message.content as Block[];
  return {
    seq: message.seq,
    role: message.role as Role,
    kind: message.kind === 'clip_archive' ? 'clip_archive' : 'message',
    content,
    tokens: 0,
    toolUseIds: content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])),
    toolResultIds: content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
  };
}

export function defaultPolicy(overrides: Record<string, unknown> = {}): Policy {
  return PolicySchema.parse(overrides);
}

export async function sequentialFold(options: {
  baseUrl: string;
  /** chunks of messages, each in chronological order; folded in the order of their first seq */
  chunks: HistoryMessage[][];
  policy: Policy;
  model?: string;
  /** running summary carried in from an earlier fold (token-economy rounds) */
  initialSummary?: string | null;
}): Promise<FoldResult> {
  const client = new Anthropic({ apiKey: 'not-needed', baseURL: options.baseUrl, maxRetries: 0, timeout: 600_000 });
  const ordered = [...options.chunks]
    .filter((c) => c.length > 0)
    .sort((a, b) => (a[0] as HistoryMessage).seq - (b[0] as HistoryMessage).seq);
  let summary: string | null = options.initialSummary ?? null;
  const result: FoldResult = { wallMs: 0, calls: 0, inputTokens: 0, outputTokens: 0, summary: '', callWindows: [] };
  const started = performance.now();
  for (const chunk of ordered) {
    const request = buildSummarizeRequest(chunk, summary, options.policy, { countTokens });
    const callStart = Date.now();
    const message = await client.messages.create(buildAnthropicParams(request, options.model ?? 'claude-haiku-4-5'));
    result.callWindows.push([callStart, Date.now()]);
    result.calls += 1;
    result.inputTokens += message.usage.input_tokens;
    result.outputTokens += message.usage.output_tokens;
    summary = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  }
  result.wallMs = performance.now() - started;
  result.summary = summary ?? '';
  return result;
}
