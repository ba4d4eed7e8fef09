import { type Breakpoint, canonicalKey, type LayoutBlock, type PromptLayout } from './prompt-cache.js';
import { isObject, type Json } from './request-issue.js';
import {
  blockText,
  contentText,
  type SimAnswer,
  type SimCompactionAsk,
  type SimCompactionOutput,
  type SimMessage,
  type SimRequest,
  SimRequestError,
  type SimUsage,
} from './types.js';
import { carriesSignedCompactionBlock, isLiveCompactionBlock, validateAnthropicRequest } from './validate-anthropic.js';
import { sseFrame, type WireErrorKind, type WireFormat } from './wire.js';

/**
 * The Anthropic Messages API as the official SDK sees it: `POST /v1/messages`, JSON or
 * SSE (message_start, content_block_start, ping, content_block_delta…, content_block_stop,
 * message_delta, message_stop), errors as `{type: "error", error: {type, message}}`.
 *
 * Beyond plain messages:
 * - prompt caching: `cache_control` breakpoints (see prompt-cache.ts), at most 4, type
 *   `ephemeral`, `ttl` `5m` (default) or `1h`; usage `cache_creation_input_tokens`,
 *   `cache_read_input_tokens` and `cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`;
 * - on-demand compaction (beta `compact-2026-09-04`): top-level
 *   `compaction: {type: "summarize", instructions?}` answers the single block
 *   `{type: "compaction", content, signature}` with `stop_reason: "compaction"` and
 *   `usage.iterations: [{type: "compaction", input_tokens, output_tokens, cache_read_input_tokens,
 *   cache_creation_input_tokens}]` (the top-level usage is that iteration). Refused (400) without
 *   the beta header, with `context_management`, and when the last assistant turn's tool call is
 *   unanswered. Streamed, the block starts as `{type: "compaction", content: null, signature}`
 *   and one `compaction_delta` `{type: "compaction_delta", content}` carries the whole summary
 *   when it is written (the SDK assigns it), then message_delta with `stop_reason: "compaction"`;
 * - threshold mode: `context_management.edits: [{type: "compact_20260112", trigger?: {type:
 *   "input_tokens", value}, instructions?, pause_after_compaction?}]`: an input over the trigger
 *   (default 150,000 tokens) answers `{type: "compaction", content, encrypted_content}` first,
 *   then the answer (or the block alone, `stop_reason: "compaction"`, when paused); usage.iterations
 *   holds the compaction and the message iteration, the top level the message iteration only.
 *   Streamed, the block is complete (start, one compaction_delta with content and
 *   encrypted_content, stop) before the text block, index 1.
 * A request carrying a threshold block counts from it on: the turns before it are replaced.
 */

export const COMPACTION_BETA = 'compact-2026-09-04';
export const DEFAULT_COMPACTION_TRIGGER_TOKENS = 150_000;
const MAX_BREAKPOINTS = 4;

const invalid = (message: string, param: string | null = null): SimRequestError =>
  new SimRequestError(400, message, 'invalid_request', param);

/** The betas a request names in `anthropic-beta` (comma-separated, possibly repeated). */
export function betasOf(headers: Record<string, string>): string[] {
  return (headers['anthropic-beta'] ?? '')
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '');
}

function parse(body: unknown, headers: Record<string, string> = {}): SimRequest {
  if (typeof body !== 'object' || body === null) throw new SimRequestError(400, 'request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b['model'] !== 'string' || b['model'] === '') throw new SimRequestError(400, 'model: Field required');
  const maxTokens = b['max_tokens'];
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new SimRequestError(400, 'max_tokens: Field required (an integer ≥ 1)');
  }
  const betas = betasOf(headers);
  const compaction = readCompactionParam(b, betas) ?? readThresholdEdit(b);
  // The API's message rules (roles, order, tool pairing, no blank text, compaction blocks): see validate-anthropic.ts.
  const problem = validateAnthropicRequest(b);
  if (problem) throw new SimRequestError(400, problem.message, 'invalid_request', problem.param);
  if (carriesSignedCompactionBlock(b['messages']) && !betas.includes(COMPACTION_BETA)) {
    throw invalid(`anthropic-beta: a request carrying a compaction block needs the beta header "${COMPACTION_BETA}"`, 'anthropic-beta');
  }
  const breakpoints = readBreakpoints(b);
  const raw = effectiveMessages(b['messages'] as Json[]);
  const messages: SimMessage[] = [];
  const layout: PromptLayout = { scheme: 'anthropic', tools: breakpoints.tools, messages: [] };
  const system = contentText(b['system']);
  if (system !== '') {
    messages.push({ role: 'system', content: system });
    layout.messages.push({ blocks: layoutBlocks('system', b['system']) });
  }
  for (const message of raw) {
    const role = message['role'] === 'assistant' ? 'assistant' : 'user';
    messages.push({ role, content: contentText(message['content']) });
    layout.messages.push({ blocks: layoutBlocks(role, message['content']) });
  }
  if (breakpoints.topLevel !== null) markLast(layout, breakpoints.topLevel);
  return {
    api: 'anthropic',
    endpoint: '/v1/messages',
    model: b['model'],
    messages,
    maxTokens,
    stream: b['stream'] === true,
    includeUsage: true,
    layout,
    ...(compaction === null ? {} : { compaction }),
  };
}

/** On-demand compaction: `compaction: {type: "summarize", instructions?}` (null when absent). */
function readCompactionParam(b: Json, betas: readonly string[]): SimCompactionAsk | null {
  const param = b['compaction'];
  if (param === undefined || param === null) return null;
  if (!betas.includes(COMPACTION_BETA)) {
    throw invalid(
      `compaction: Extra inputs are not permitted (the compaction parameter needs the anthropic-beta header "${COMPACTION_BETA}")`,
      'compaction',
    );
  }
  if (!isObject(param) || param['type'] !== 'summarize') throw invalid("compaction.type: Input should be 'summarize'", 'compaction.type');
  const instructions = param['instructions'];
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string')
    throw invalid('compaction.instructions: Input should be a valid string', 'compaction.instructions');
  if (b['context_management'] !== undefined && b['context_management'] !== null) {
    throw invalid('compaction: cannot be combined with context_management', 'compaction');
  }
  const open = unansweredToolCalls(b['messages']);
  if (open.length > 0) {
    throw invalid(
      `compaction: the conversation ends with an unanswered tool call (${open.join(', ')}); send its tool_result before compacting`,
      'compaction',
    );
  }
  return { kind: 'summarize', instructions: typeof instructions === 'string' && instructions.trim() !== '' ? instructions : null };
}

/** The tool_use ids of the last assistant turn that no later user turn answers. */
function unansweredToolCalls(messages: unknown): string[] {
  if (!Array.isArray(messages)) return [];
  const list = messages.filter(isObject);
  let last = -1;
  list.forEach((m, i) => {
    if (m['role'] === 'assistant') last = i;
  });
  if (last === -1) return [];
  const blocks = (m: Json | undefined): Json[] => (Array.isArray(m?.['content']) ? (m['content'] as unknown[]).filter(isObject) : []);
  const uses = blocks(list[last]).flatMap((block) => (block['type'] === 'tool_use' ? [String(block['id'])] : []));
  const answered = new Set(
    list
      .slice(last + 1)
      .flatMap((m) => blocks(m).flatMap((block) => (block['type'] === 'tool_result' ? [String(block['tool_use_id'])] : []))),
  );
  return uses.filter((id) => !answered.has(id));
}

/** Threshold mode: a `compact_20260112` edit in `context_management.edits` (null when absent). */
function readThresholdEdit(b: Json): SimCompactionAsk | null {
  const management = b['context_management'];
  if (management === undefined || management === null) return null;
  if (!isObject(management)) throw invalid('context_management: Input should be an object', 'context_management');
  const edits = management['edits'] ?? [];
  if (!Array.isArray(edits)) throw invalid('context_management.edits: Input should be a valid list', 'context_management.edits');
  let ask: SimCompactionAsk | null = null;
  for (const [i, edit] of edits.entries()) {
    const param = `context_management.edits.${i}`;
    if (!isObject(edit) || typeof edit['type'] !== 'string') throw invalid(`${param}.type: Field required`, `${param}.type`);
    if (edit['type'] !== 'compact_20260112') continue;
    const trigger = edit['trigger'];
    let triggerTokens = DEFAULT_COMPACTION_TRIGGER_TOKENS;
    if (trigger !== undefined && trigger !== null) {
      if (
        !isObject(trigger) ||
        trigger['type'] !== 'input_tokens' ||
        typeof trigger['value'] !== 'number' ||
        !Number.isInteger(trigger['value']) ||
        trigger['value'] < 1
      ) {
        throw invalid(`${param}.trigger: Input should be {type: 'input_tokens', value: a positive integer}`, `${param}.trigger`);
      }
      triggerTokens = trigger['value'];
    }
    const instructions = edit['instructions'];
    if (instructions !== undefined && instructions !== null && typeof instructions !== 'string')
      throw invalid(`${param}.instructions: Input should be a valid string`, `${param}.instructions`);
    const pause = edit['pause_after_compaction'];
    if (pause !== undefined && typeof pause !== 'boolean')
      throw invalid(`${param}.pause_after_compaction: Input should be a valid boolean`, `${param}.pause_after_compaction`);
    ask = {
      kind: 'compact_20260112',
      instructions: typeof instructions === 'string' && instructions.trim() !== '' ? instructions : null,
      triggerTokens,
      pause: pause === true,
    };
  }
  return ask;
}

interface Breakpoints {
  tools: PromptLayout['tools'];
  /** the top-level `cache_control` (marks the last block) */
  topLevel: Breakpoint | null;
}

/** Checks every `cache_control` of the request (type, ttl, at most four) and keys the tools. */
function readBreakpoints(b: Json): Breakpoints {
  let count = 0;
  const read = (value: unknown, param: string): Breakpoint | null => {
    if (value === undefined || value === null) return null;
    if (!isObject(value) || value['type'] !== 'ephemeral') throw invalid(`${param}.type: Input should be 'ephemeral'`, `${param}.type`);
    const ttl = value['ttl'];
    if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') throw invalid(`${param}.ttl: Input should be '5m' or '1h'`, `${param}.ttl`);
    count += 1;
    return { ttl: ttl === '1h' ? '1h' : '5m' };
  };
  const tools = (Array.isArray(b['tools']) ? (b['tools'] as unknown[]) : []).map((tool, i) => ({
    key: canonicalKey(tool),
    breakpoint: read(isObject(tool) ? tool['cache_control'] : undefined, `tools.${i}.cache_control`),
  }));
  if (Array.isArray(b['system']))
    (b['system'] as unknown[]).forEach((block, j) =>
      read(isObject(block) ? block['cache_control'] : undefined, `system.${j}.cache_control`),
    );
  (b['messages'] as unknown[]).forEach((message, i) => {
    const content = isObject(message) ? message['content'] : undefined;
    if (Array.isArray(content))
      content.forEach((block, j) => read(isObject(block) ? block['cache_control'] : undefined, `messages.${i}.content.${j}.cache_control`));
  });
  const topLevel = read(b['cache_control'], 'cache_control');
  if (count > MAX_BREAKPOINTS) throw invalid(`A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.`);
  return { tools, topLevel };
}

function breakpointOf(block: unknown): Breakpoint | null {
  const control = isObject(block) ? block['cache_control'] : undefined;
  return isObject(control) ? { ttl: control['ttl'] === '1h' ? '1h' : '5m' } : null;
}

/** The blocks of a `system` or message content as the cache sees them (a string is one text block). */
function layoutBlocks(role: string, content: unknown): LayoutBlock[] {
  const blocks =
    typeof content === 'string'
      ? content === ''
        ? []
        : [{ type: 'text', text: content }]
      : Array.isArray(content)
        ? (content as unknown[])
        : [];
  if (blocks.length === 0) return [{ key: `${role}${canonicalKey('')}`, text: '', breakpoint: null }];
  return blocks.map((block) => ({ key: `${role}${canonicalKey(block)}`, text: blockText(block), breakpoint: breakpointOf(block) }));
}

function markLast(layout: PromptLayout, breakpoint: Breakpoint): void {
  const last = layout.messages[layout.messages.length - 1]?.blocks.at(-1);
  if (last !== undefined) last.breakpoint = breakpoint;
  else if (layout.tools.length > 0) (layout.tools[layout.tools.length - 1] as PromptLayout['tools'][number]).breakpoint = breakpoint;
}

/** The messages the model reads: a threshold-mode compaction block replaces every turn before it. */
function effectiveMessages(messages: Json[]): Json[] {
  let start = 0;
  messages.forEach((message, i) => {
    const first = Array.isArray(message['content']) ? (message['content'] as unknown[])[0] : undefined;
    if (isLiveCompactionBlock(first) && first['encrypted_content'] != null) start = i;
  });
  return messages.slice(start);
}

const stopReason = (answer: SimAnswer): string =>
  answer.stop === 'compaction' ? 'compaction' : answer.stop === 'length' ? 'max_tokens' : 'end_turn';

function usageFields(usage: SimUsage): Record<string, number> {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
  };
}

function usage(answer: SimAnswer, outputTokens: number): Record<string, unknown> {
  const write1h = answer.usage.cacheWrite1hTokens ?? 0;
  return {
    input_tokens: answer.usage.inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: answer.usage.cacheWriteTokens,
    cache_read_input_tokens: answer.usage.cacheReadTokens,
    cache_creation: { ephemeral_5m_input_tokens: answer.usage.cacheWriteTokens - write1h, ephemeral_1h_input_tokens: write1h },
    service_tier: 'standard',
    ...(answer.iterations === undefined ? {} : { iterations: answer.iterations.map((it) => ({ type: it.type, ...usageFields(it) })) }),
  };
}

function message(answer: SimAnswer, content: unknown[], stop: string | null, outputTokens: number): Record<string, unknown> {
  return {
    id: answer.id,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: usage(answer, outputTokens),
  };
}

/** The compaction block as returned: on-demand `{type, content, signature}`, threshold `{type, content, encrypted_content}`. */
function compactionBlock(compaction: SimCompactionOutput, content: string | null = compaction.content): Record<string, unknown> {
  return compaction.kind === 'summarize'
    ? { type: 'compaction', content, signature: compaction.signature ?? null }
    : { type: 'compaction', content, encrypted_content: content === null ? null : (compaction.encryptedContent ?? null) };
}

function compactionDelta(compaction: SimCompactionOutput): Record<string, unknown> {
  return compaction.kind === 'summarize'
    ? { type: 'compaction_delta', content: compaction.content }
    : { type: 'compaction_delta', content: compaction.content, encrypted_content: compaction.encryptedContent ?? null };
}

/** Index of the text block: after the compaction block when there is one. */
const textIndex = (answer: SimAnswer): number => (answer.compaction === undefined ? 0 : 1);

const ERRORS: Record<WireErrorKind, { status: number; type: string }> = {
  rate_limit: { status: 429, type: 'rate_limit_error' },
  overloaded: { status: 529, type: 'overloaded_error' },
  server_error: { status: 500, type: 'api_error' },
  auth: { status: 401, type: 'authentication_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  not_found: { status: 404, type: 'not_found_error' },
};

export const anthropicWire: WireFormat = {
  parse,
  response: (answer) => {
    const content: unknown[] = [];
    if (answer.compaction !== undefined) content.push(compactionBlock(answer.compaction));
    if (answer.compaction?.alone !== true && answer.text !== '') content.push({ type: 'text', text: answer.text });
    return message(answer, content, stopReason(answer), answer.usage.outputTokens);
  },
  streamStart: (answer) => {
    const frames = [sseFrame({ type: 'message_start', message: message(answer, [], null, 1) }, 'message_start')];
    const compaction = answer.compaction;
    if (compaction !== undefined) {
      frames.push(
        sseFrame({ type: 'content_block_start', index: 0, content_block: compactionBlock(compaction, null) }, 'content_block_start'),
      );
      if (!compaction.alone) {
        // threshold mode: the compaction happened before the answer, so its block is complete first
        frames.push(
          sseFrame({ type: 'content_block_delta', index: 0, delta: compactionDelta(compaction) }, 'content_block_delta'),
          sseFrame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
        );
      }
    }
    if (compaction?.alone !== true)
      frames.push(
        sseFrame(
          { type: 'content_block_start', index: textIndex(answer), content_block: { type: 'text', text: '' } },
          'content_block_start',
        ),
      );
    frames.push(sseFrame({ type: 'ping' }, 'ping'));
    return frames;
  },
  streamDelta: (answer, text) =>
    sseFrame({ type: 'content_block_delta', index: textIndex(answer), delta: { type: 'text_delta', text } }, 'content_block_delta'),
  streamEnd: (answer) => {
    const compaction = answer.compaction;
    const frames =
      compaction?.alone === true
        ? [
            sseFrame({ type: 'content_block_delta', index: 0, delta: compactionDelta(compaction) }, 'content_block_delta'),
            sseFrame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
          ]
        : [sseFrame({ type: 'content_block_stop', index: textIndex(answer) }, 'content_block_stop')];
    const { output_tokens: _output, cache_creation: _creation, service_tier: _tier, ...totals } = usage(answer, answer.usage.outputTokens);
    frames.push(
      sseFrame(
        {
          type: 'message_delta',
          delta: { stop_reason: stopReason(answer), stop_sequence: null },
          usage: { output_tokens: answer.usage.outputTokens, ...totals },
        },
        'message_delta',
      ),
      sseFrame({ type: 'message_stop' }, 'message_stop'),
    );
    return frames;
  },
  error: (kind, text) => {
    const { status, type } = ERRORS[kind];
    return { status, body: { type: 'error', error: { type, message: text } } };
  },
};
