import { openResponsesItem } from './compaction-seal.js';
import { canonicalKey, type PromptLayout } from './prompt-cache.js';
import { isObject, type Json } from './request-issue.js';
import { type SimMessage, type SimRequest, SimRequestError } from './types.js';

/**
 * Reads an OpenAI Responses API request (`POST /v1/responses` and `/v1/responses/compact`) into
 * the sim's request, or throws the 400 the API would answer. What it takes is listed in
 * wire-responses.ts, which writes the answers.
 */

const invalid = (message: string, param: string | null = null, code: string | null = null): SimRequestError =>
  new SimRequestError(400, message, 'invalid_request', param, code);

/** Item types the sim reads as opaque history: their JSON counts, nothing is checked. */
const OPAQUE_ITEMS = new Set([
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'web_search_call',
  'file_search_call',
  'computer_call',
  'computer_call_output',
  'image_generation_call',
  'code_interpreter_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'tool_search_call',
  'tool_search_output',
]);
const PART_TYPES = new Set([
  'input_text',
  'output_text',
  'text',
  'refusal',
  'input_image',
  'input_file',
  'input_audio',
  'summary_text',
  'reasoning_text',
]);
const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

interface ReadItem {
  message: SimMessage | null;
  /** the item as the cache sees it */
  key: string;
}

export function parseResponsesRequest(endpoint: '/v1/responses' | '/v1/responses/compact') {
  return (body: unknown): SimRequest => {
    if (!isObject(body)) throw invalid('request body must be a JSON object');
    const model = body['model'];
    if (typeof model !== 'string' || model === '') throw invalid("Missing required parameter: 'model'.", 'model');
    const previous = body['previous_response_id'];
    if (previous !== undefined && previous !== null) {
      throw invalid(`Previous response with id '${String(previous)}' not found.`, 'previous_response_id', 'previous_response_not_found');
    }
    const instructions = body['instructions'];
    if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
      throw invalid("Invalid type for 'instructions': expected a string.", 'instructions');
    }
    const limit = body['max_output_tokens'];
    if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
      throw invalid("Invalid 'max_output_tokens': integer below minimum value 1.", 'max_output_tokens');
    }
    const tools = body['tools'];
    if (tools !== undefined && tools !== null && !Array.isArray(tools))
      throw invalid("Invalid type for 'tools': expected an array.", 'tools');

    const items = inputItems(body['input']);
    const messages: SimMessage[] = [];
    const layout: PromptLayout = {
      scheme: 'openai',
      tools: ((tools ?? []) as unknown[]).map((tool) => ({ key: canonicalKey(tool), breakpoint: null })),
      messages: [],
    };
    const push = (message: SimMessage, key: string): void => {
      messages.push(message);
      layout.messages.push({ blocks: [{ key, text: message.content, breakpoint: null }] });
    };
    if (typeof instructions === 'string' && instructions !== '')
      push({ role: 'system', content: instructions }, canonicalKey({ instructions }));

    let trigger = false;
    const kept: Array<Record<string, unknown>> = [];
    const calls = new Set<string>();
    const opened = new Set<string>();
    const answered = new Set<string>();
    for (const [i, raw] of items.entries()) {
      const param = `input[${i}]`;
      if (!isObject(raw)) throw invalid(`Invalid type for '${param}': expected an object.`, param);
      const type = raw['type'] ?? (raw['role'] !== undefined ? 'message' : undefined);
      if (type === 'compaction_trigger') {
        if (endpoint === '/v1/responses/compact')
          throw invalid(`Invalid value for '${param}.type': 'compaction_trigger' is not accepted by /responses/compact.`, `${param}.type`);
        if (i !== items.length - 1) throw invalid(`Invalid '${param}': a 'compaction_trigger' item must be the final input item.`, param);
        trigger = true;
        continue;
      }
      const read = readItem(raw, String(type), param, { calls, opened, answered });
      if (read.message !== null) push(read.message, read.key);
      if (type === 'message' && raw['role'] === 'user') kept.push(keptMessage(raw));
    }
    const unanswered = [...calls].filter((id) => !answered.has(id));
    if (unanswered.length > 0) throw invalid(`No tool output found for function call ${unanswered[0]}.`, 'input');
    if (messages.every((m) => m.role === 'system')) throw invalid("Invalid 'input': expected at least one input item.", 'input');

    const compaction =
      endpoint === '/v1/responses/compact'
        ? { kind: 'responses_compact' as const, instructions: null, kept }
        : trigger
          ? { kind: 'compaction_trigger' as const, instructions: null, kept }
          : undefined;
    return {
      api: 'openai',
      endpoint,
      model,
      messages,
      maxTokens: typeof limit === 'number' ? limit : 4_096,
      stream: endpoint === '/v1/responses' && body['stream'] === true,
      includeUsage: true,
      layout,
      ...(compaction === undefined ? {} : { compaction }),
      echo: {
        instructions: instructions ?? null,
        max_output_tokens: limit ?? null,
        parallel_tool_calls: body['parallel_tool_calls'] ?? true,
        tool_choice: body['tool_choice'] ?? 'auto',
        tools: tools ?? [],
        store: body['store'] ?? true,
        metadata: body['metadata'] ?? {},
        temperature: body['temperature'] ?? 1,
        top_p: body['top_p'] ?? 1,
        reasoning: { effort: null, summary: null, ...(isObject(body['reasoning']) ? body['reasoning'] : {}) },
        text: isObject(body['text']) ? body['text'] : { format: { type: 'text' } },
        prompt_cache_key: body['prompt_cache_key'] ?? null,
      },
    };
  };
}

function inputItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw invalid("Missing required parameter: 'input'.", 'input');
  return input;
}

/** An item without what does not reach the model (its id and status), for the cache key. */
function keyOf(item: Json): string {
  const { id: _id, status: _status, ...rest } = item;
  return canonicalKey(rest);
}

function partsText(content: unknown, param: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(`Invalid type for '${param}': expected a string or an array of content parts.`, param);
  return content
    .map((part, k) => {
      const partParam = `${param}[${k}]`;
      if (!isObject(part) || typeof part['type'] !== 'string' || !PART_TYPES.has(part['type'])) {
        throw invalid(`Invalid value for '${partParam}.type': expected one of ${[...PART_TYPES].join(', ')}.`, `${partParam}.type`);
      }
      if (typeof part['text'] === 'string') return part['text'];
      if (typeof part['refusal'] === 'string') return part['refusal'];
      return '';
    })
    .join('\n');
}

interface ToolCalls {
  /** function and custom tool calls: each needs its output */
  calls: Set<string>;
  /** hosted tool calls an output may answer */
  opened: Set<string>;
  answered: Set<string>;
}

function readItem(raw: Json, type: string, param: string, tools: ToolCalls): ReadItem {
  const key = keyOf(raw);
  switch (type) {
    case 'message': {
      const role = raw['role'];
      if (typeof role !== 'string' || !ROLES.has(role)) {
        throw invalid(`Invalid value for '${param}.role': expected one of user, assistant, system, developer.`, `${param}.role`);
      }
      const text = partsText(raw['content'], `${param}.content`);
      // a string content and the same text as one part are the same prompt
      const normal = {
        type: 'message',
        role,
        content:
          typeof raw['content'] === 'string' ? [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] : raw['content'],
      };
      return {
        message: { role: role === 'developer' || role === 'system' ? 'system' : (role as SimMessage['role']), content: text },
        key: canonicalKey(normal),
      };
    }
    case 'function_call':
    case 'custom_tool_call': {
      const callId = raw['call_id'];
      if (typeof callId !== 'string' || callId === '') throw invalid(`Missing required parameter: '${param}.call_id'.`, `${param}.call_id`);
      if (typeof raw['name'] !== 'string') throw invalid(`Missing required parameter: '${param}.name'.`, `${param}.name`);
      const args = type === 'function_call' ? raw['arguments'] : raw['input'];
      if (typeof args !== 'string')
        throw invalid(`Missing required parameter: '${param}.${type === 'function_call' ? 'arguments' : 'input'}'.`, param);
      tools.calls.add(callId);
      return { message: { role: 'assistant', content: `${raw['name']} ${args}` }, key };
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const callId = raw['call_id'];
      if (typeof callId !== 'string' || !(tools.calls.has(callId) || tools.opened.has(callId)))
        throw invalid(`No tool call found for function call output with call_id ${String(callId)}.`, 'input');
      tools.answered.add(callId);
      return { message: { role: 'tool', content: partsText(raw['output'] ?? '', `${param}.output`) }, key };
    }
    case 'reasoning': {
      const summary = Array.isArray(raw['summary']) ? (raw['summary'] as unknown[]) : [];
      return { message: { role: 'assistant', content: partsText(summary, `${param}.summary`) }, key };
    }
    // 'compaction_summary' is Codex's older name for the same item
    case 'compaction':
    case 'compaction_summary': {
      const summary = openResponsesItem(raw['encrypted_content']);
      if (summary === null) {
        throw invalid(
          `The encrypted content of '${param}' could not be verified: it is not a compaction item this API issued.`,
          `${param}.encrypted_content`,
          'invalid_encrypted_content',
        );
      }
      return { message: { role: 'assistant', content: summary }, key };
    }
    case 'item_reference':
      throw invalid(`Item with id '${String(raw['id'])}' not found: items are not stored, send them whole.`, param);
    default:
      if (OPAQUE_ITEMS.has(type)) {
        // a local shell (or other hosted tool) call may be answered by a function_call_output
        if (typeof raw['call_id'] === 'string' && type.endsWith('_call')) tools.opened.add(raw['call_id']);
        return { message: { role: type.endsWith('_output') ? 'tool' : 'assistant', content: JSON.stringify(raw) }, key };
      }
      throw invalid(`Invalid value for '${param}.type': '${type}' is not a supported input item type.`, `${param}.type`);
  }
}

/** A user message as the compaction output keeps it. */
function keptMessage(raw: Json): Record<string, unknown> {
  const content = typeof raw['content'] === 'string' ? [{ type: 'input_text', text: raw['content'] }] : raw['content'];
  return { type: 'message', role: 'user', content };
}
