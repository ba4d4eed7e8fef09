import { isObject, type Json, type RequestIssue } from './request-issue.js';

/**
 * The OpenAI Chat Completions rules a compaction service can break, as a pure function over
 * a request body (or a `GET /context?format=openai` body: only `messages` is read). Returns
 * the first broken rule, or null when the API would take it.
 *
 * - Roles: system, developer, user, assistant, tool (system/developer may stand anywhere).
 * - Content: a string or a non-empty list of parts. Unlike Anthropic, the API takes an
 *   empty or blank string, so those pass here too. An assistant message may leave content
 *   null or out only when it carries `tool_calls`.
 * - `tool_calls` only on assistant messages, ids unique in the request; every id answered
 *   by a `tool` message in the run of `tool` messages directly after that assistant
 *   message; a `tool` message answers a call of that assistant message, once.
 */

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const PART_TYPES: Record<string, ReadonlySet<string>> = {
  system: new Set(['text']),
  developer: new Set(['text']),
  user: new Set(['text', 'image_url', 'input_audio', 'file']),
  assistant: new Set(['text', 'refusal']),
  tool: new Set(['text']),
};

const issue = (param: string, message: string): RequestIssue => ({ param, message });

export function validateOpenAIRequest(body: unknown): RequestIssue | null {
  if (!isObject(body)) return issue('body', 'request body must be a JSON object');
  const messages = body['messages'];
  if (!Array.isArray(messages)) return issue('messages', "Missing required parameter: 'messages'.");
  if (messages.length === 0) return issue('messages', "Invalid 'messages': empty array. Expected an array with minimum length 1.");
  for (let i = 0; i < messages.length; i++) {
    const shapeIssue = checkMessage(messages[i], i);
    if (shapeIssue) return shapeIssue;
  }
  return checkPairing(messages as Json[]);
}

function checkMessage(raw: unknown, i: number): RequestIssue | null {
  const param = `messages[${i}]`;
  if (!isObject(raw)) return issue(param, `Invalid type for '${param}': expected an object.`);
  const role = raw['role'];
  if (typeof role !== 'string' || !ROLES.has(role)) {
    return issue(
      `${param}.role`,
      `Invalid value for '${param}.role': '${String(role)}'. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'.`,
    );
  }
  const hasCalls = raw['tool_calls'] !== undefined && raw['tool_calls'] !== null;
  if (hasCalls && role !== 'assistant')
    return issue(`${param}.tool_calls`, `'tool_calls' is only allowed on assistant messages, not '${role}'.`);
  if (role === 'tool' && typeof raw['tool_call_id'] !== 'string') {
    return issue(`${param}.tool_call_id`, `Missing required parameter: '${param}.tool_call_id'.`);
  }
  if (hasCalls) {
    const callsIssue = checkToolCalls(raw['tool_calls'], param);
    if (callsIssue) return callsIssue;
  }
  return checkContent(raw['content'], role, param, role === 'assistant' && hasCalls);
}

function checkContent(content: unknown, role: string, param: string, mayBeNull: boolean): RequestIssue | null {
  const field = `${param}.content`;
  if (content === undefined || content === null) {
    return mayBeNull
      ? null
      : issue(field, `Invalid value for '${field}': expected a string or an array of content parts, got ${String(content)}.`);
  }
  if (typeof content === 'string') return null;
  if (!Array.isArray(content)) return issue(field, `Invalid type for '${field}': expected a string or an array of content parts.`);
  if (content.length === 0) return issue(field, `Invalid '${field}': empty array. Expected an array with minimum length 1.`);
  const allowed = PART_TYPES[role] ?? new Set<string>();
  for (const [k, part] of content.entries()) {
    const partParam = `${field}[${k}]`;
    if (!isObject(part) || typeof part['type'] !== 'string' || !allowed.has(part['type'])) {
      return issue(`${partParam}.type`, `Invalid value for '${partParam}.type': ${role} content parts may be ${[...allowed].join(', ')}.`);
    }
    if (part['type'] === 'text' && typeof part['text'] !== 'string')
      return issue(`${partParam}.text`, `Missing required parameter: '${partParam}.text'.`);
    if (part['type'] === 'image_url' && !isObject(part['image_url'])) {
      return issue(`${partParam}.image_url`, `Missing required parameter: '${partParam}.image_url'.`);
    }
  }
  return null;
}

function checkToolCalls(calls: unknown, param: string): RequestIssue | null {
  const field = `${param}.tool_calls`;
  if (!Array.isArray(calls)) return issue(field, `Invalid type for '${field}': expected an array.`);
  if (calls.length === 0) return issue(field, `Invalid '${field}': empty array. Expected an array with minimum length 1.`);
  for (const [k, call] of calls.entries()) {
    const callParam = `${field}[${k}]`;
    if (!isObject(call) || typeof call['id'] !== 'string' || call['id'] === '')
      return issue(`${callParam}.id`, `Missing required parameter: '${callParam}.id'.`);
    if (call['type'] !== 'function') return issue(`${callParam}.type`, `Invalid value for '${callParam}.type': expected 'function'.`);
    const fn = call['function'];
    if (!isObject(fn) || typeof fn['name'] !== 'string' || typeof fn['arguments'] !== 'string') {
      return issue(`${callParam}.function`, `Invalid '${callParam}.function': expected an object with string 'name' and 'arguments'.`);
    }
  }
  return null;
}

const callIdsOf = (message: Json): string[] =>
  Array.isArray(message['tool_calls']) ? (message['tool_calls'] as Json[]).map((call) => String(call['id'])) : [];

function checkPairing(messages: readonly Json[]): RequestIssue | null {
  const usedIds = new Set<string>();
  let i = 0;
  while (i < messages.length) {
    const message = messages[i] as Json;
    if (message['role'] === 'tool') return strayToolMessage(i);
    const calls = callIdsOf(message);
    i += 1;
    if (calls.length === 0) continue;
    for (const id of calls) {
      if (usedIds.has(id))
        return issue(`messages[${i - 1}].tool_calls`, `Duplicate tool call id '${id}': every tool call id must be unique.`);
      usedIds.add(id);
    }
    const open = new Set(calls);
    const answered = new Set<string>();
    for (; i < messages.length && messages[i]?.['role'] === 'tool'; i += 1) {
      const id = String(messages[i]?.['tool_call_id']);
      if (answered.has(id))
        return issue(`messages[${i}].tool_call_id`, `Duplicate response for tool call id '${id}': a tool call takes one 'tool' message.`);
      if (!open.has(id)) return strayToolMessage(i);
      answered.add(id);
    }
    const missing = calls.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return issue(
        `messages[${i - answered.size - 1}].role`,
        `An assistant message with 'tool_calls' must be followed by 'tool' messages answering each 'tool_call_id'. Unanswered tool_call_ids: ${missing.join(', ')}.`,
      );
    }
  }
  return null;
}

const strayToolMessage = (i: number): RequestIssue =>
  issue(
    `messages[${i}].role`,
    "Invalid parameter: a message with role 'tool' must answer a tool call of the assistant message with 'tool_calls' right before it.",
  );
