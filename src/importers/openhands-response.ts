import { isRecord } from './json.js';

/**
 * What an OpenHands event records of the model's own reply: `tool_call_metadata.model_response`
 * is the OpenAI-format completion (as LiteLLM returns it, whatever the provider) from which
 * OpenHands derived its actions. Every action of one reply carries the same response, so the
 * reply's text and tool calls are read from there, not rebuilt from the actions (whose names
 * — `run`, `read`, `edit` — and arguments — `impl_source`, `start`, `end` — are OpenHands' own).
 */

export interface ModelToolCall {
  id: string;
  name: string;
  /** the arguments the model wrote, parsed from their JSON string (kept verbatim when not JSON) */
  input: unknown;
}

export interface ModelReply {
  /** what identifies the reply among the events (the response id, else its call ids) */
  key: string;
  text: string;
  calls: ModelToolCall[];
  model?: string;
  usage?: { inputTokens: number; outputTokens: number };
}

/** The tool call id and function name OpenHands recorded for an event, when it did. */
export function toolCallMetadata(event: Record<string, unknown>): { toolCallId?: string; functionName?: string } | undefined {
  const meta = event.tool_call_metadata;
  if (!isRecord(meta)) return undefined;
  const out: { toolCallId?: string; functionName?: string } = {};
  if (typeof meta.tool_call_id === 'string' && meta.tool_call_id !== '') out.toolCallId = meta.tool_call_id;
  if (typeof meta.function_name === 'string' && meta.function_name !== '') out.functionName = meta.function_name;
  return out;
}

/** The model's reply behind an action, or undefined when the event records no usable response. */
export function modelReplyOf(event: Record<string, unknown>): ModelReply | undefined {
  const meta = event.tool_call_metadata;
  const response = isRecord(meta) ? meta.model_response : undefined;
  if (!isRecord(response) || !Array.isArray(response.choices)) return undefined;
  const choice: unknown = response.choices[0];
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(message) || !Array.isArray(message.tool_calls)) return undefined;
  const calls = message.tool_calls.flatMap(toolCallOf);
  if (calls.length === 0) return undefined;
  const key =
    typeof response.id === 'string' && response.id !== '' ? `response ${response.id}` : `calls ${calls.map((c) => c.id).join(' ')}`;
  const reply: ModelReply = { key, text: contentText(message.content), calls };
  if (typeof response.model === 'string' && response.model !== '') reply.model = response.model;
  const usage = usageOf(response.usage);
  if (usage) reply.usage = usage;
  return reply;
}

function toolCallOf(call: unknown): ModelToolCall[] {
  if (!isRecord(call) || !isRecord(call.function) || typeof call.id !== 'string' || call.id === '') return [];
  const { name, arguments: args } = call.function;
  if (typeof name !== 'string' || name === '') return [];
  return [{ id: call.id, name, input: typeof args === 'string' ? parseArguments(args) : (args ?? {}) }];
}

/** As ingestion reads OpenAI arguments: empty is `{}`, malformed JSON is kept verbatim. */
export function parseArguments(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** A completion message's content: a string, or text parts (other parts carry no text). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

function usageOf(usage: unknown): ModelReply['usage'] {
  if (!isRecord(usage)) return undefined;
  const input = usage.prompt_tokens;
  const output = usage.completion_tokens;
  if (!isCount(input) || !isCount(output)) return undefined;
  return { inputTokens: input, outputTokens: output };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
