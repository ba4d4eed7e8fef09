import { checkCompactionSignature, checkThresholdBlock } from './compaction-seal.js';
import { isBlank, isObject, type Json, type RequestIssue } from './request-issue.js';

/**
 * The Anthropic Messages API rules a compaction service can break, as a pure function
 * over a request body (or a `GET /context?format=anthropic` body: only `system` and
 * `messages` are read). Returns the first broken rule, or null when the API would take it.
 *
 * - `messages` holds only `user` and `assistant` turns; system text goes in the top-level
 *   `system` (a string or text blocks). The first message is a user turn.
 * - Consecutive turns of the same role are accepted: the API merges them into one turn.
 *   Tool pairing is nevertheless checked message by message (a `tool_use` must be answered
 *   in the very next message, a `tool_result` must answer the message just before it),
 *   which is at least as strict as checking the merged turns: every request this accepts,
 *   the API accepts, and the renderer never relies on merging to pair tools.
 * - No empty text: a text block (or string content) must hold non-whitespace text, and a
 *   message's content may be empty only in a final assistant message (a prefill), which
 *   must not end in whitespace. An empty `tool_result` content is valid.
 * - `tool_use` only in assistant turns, ids unique and `[A-Za-z0-9_-]+`, input an object;
 *   `tool_result` only in user turns, before any other block, at most one per call.
 * - Provider compaction blocks (`{type: "compaction", content, signature}` from an on-demand
 *   compaction, `{type: "compaction", content, encrypted_content}` from the threshold mode) come
 *   back byte-exact as llm-sim issued them. A signed block opens `messages` (the first block of
 *   the first message, user or assistant turn; such a first message may be an assistant turn),
 *   one per request; a threshold block is the first block of an assistant turn (the answer that
 *   carried it) or opens `messages`. Else 400 `compaction_block_misplaced`; a signature or
 *   encrypted_content the sim did not issue is `compaction_signature_invalid`, one issued for
 *   other content `compaction_content_mismatch` (the message starts with the code). A block
 *   whose content is null (a failed compaction) is a no-op. The beta header a signed block
 *   needs is checked with the request's headers (wire-anthropic.ts).
 */

const ID_PATTERN = /^[a-zA-Z0-9_-]+$/;
const ASSISTANT_ONLY = new Set(['tool_use', 'thinking', 'redacted_thinking', 'server_tool_use', 'web_search_tool_result']);
const BLOCK_TYPES = new Set(['text', 'image', 'document', 'search_result', 'tool_use', 'tool_result', 'compaction', ...ASSISTANT_ONLY]);
const RESULT_PART_TYPES = new Set(['text', 'image', 'document', 'search_result']);

const issue = (param: string, message: string): RequestIssue => ({ param, message: `${param}: ${message}` });

export function validateAnthropicRequest(body: unknown): RequestIssue | null {
  if (!isObject(body)) return { param: 'body', message: 'request body must be a JSON object' };
  const systemIssue = checkSystem(body['system']);
  if (systemIssue) return systemIssue;
  const messages = body['messages'];
  if (!Array.isArray(messages)) return issue('messages', 'Field required (a list of messages)');
  if (messages.length === 0) return issue('messages', 'at least one message is required');
  for (let i = 0; i < messages.length; i++) {
    const shapeIssue = checkMessage(messages[i], i, i === messages.length - 1);
    if (shapeIssue) return shapeIssue;
  }
  return checkCompactionBlocks(messages as Json[]) ?? checkFirstRole(messages as Json[]) ?? checkPairing(messages as Json[]);
}

export type CompactionIssueCode = 'compaction_signature_invalid' | 'compaction_content_mismatch' | 'compaction_block_misplaced';

const compactionIssue = (code: CompactionIssueCode, param: string, message: string): RequestIssue => ({
  param,
  message: `${code}: ${param}: ${message}`,
});

/** A compaction block that stands for something (null content: a failed compaction, a no-op). */
export const isLiveCompactionBlock = (block: unknown): block is Json =>
  isObject(block) && block['type'] === 'compaction' && typeof block['content'] === 'string';

/** Whether the request carries a signed (on-demand) compaction block, which needs the beta header. */
export function carriesSignedCompactionBlock(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  return messages.some(
    (m) =>
      isObject(m) &&
      Array.isArray(m['content']) &&
      (m['content'] as unknown[]).some((b) => isLiveCompactionBlock(b) && b['signature'] != null),
  );
}

function checkCompactionBlocks(messages: readonly Json[]): RequestIssue | null {
  let signed = 0;
  for (const [i, message] of messages.entries()) {
    for (const [j, block] of blocksOf(message).entries()) {
      if (!isLiveCompactionBlock(block)) continue;
      const param = `messages.${i}.content.${j}`;
      const content = block['content'] as string;
      const hasSignature = block['signature'] != null;
      const hasEncrypted = block['encrypted_content'] != null;
      if (hasSignature === hasEncrypted) {
        return compactionIssue(
          'compaction_signature_invalid',
          param,
          hasSignature
            ? 'a compaction block carries either a signature or an encrypted_content, not both'
            : 'a compaction block must be sent back with the signature (or encrypted_content) it was returned with',
        );
      }
      if (hasSignature) {
        signed += 1;
        if (signed > 1) return compactionIssue('compaction_block_misplaced', param, 'a request carries at most one compaction block');
        if (i !== 0 || j !== 0)
          return compactionIssue(
            'compaction_block_misplaced',
            param,
            'a compaction block must open `messages`: the first content block of the first message',
          );
        const verdict = checkCompactionSignature(content, block['signature']);
        if (verdict === 'invalid')
          return compactionIssue('compaction_signature_invalid', `${param}.signature`, 'the signature is not one this API issued');
        if (verdict === 'mismatch')
          return compactionIssue(
            'compaction_content_mismatch',
            `${param}.content`,
            'the content differs from the content the signature was issued for; send the block back byte-exact',
          );
      } else {
        if (j !== 0 || (i !== 0 && message['role'] !== 'assistant')) {
          return compactionIssue(
            'compaction_block_misplaced',
            param,
            'a compaction block must open the assistant turn that returned it, or `messages`',
          );
        }
        const verdict = checkThresholdBlock(content, block['encrypted_content']);
        if (verdict === 'invalid')
          return compactionIssue(
            'compaction_signature_invalid',
            `${param}.encrypted_content`,
            'the encrypted_content is not one this API issued',
          );
        if (verdict === 'mismatch')
          return compactionIssue(
            'compaction_content_mismatch',
            `${param}.content`,
            'the content differs from the content the encrypted_content was issued for; send the block back byte-exact',
          );
      }
    }
  }
  return null;
}

function checkSystem(system: unknown): RequestIssue | null {
  if (system === undefined || typeof system === 'string') return null;
  if (!Array.isArray(system)) return issue('system', 'Input should be a valid string or a list of text blocks');
  for (const [j, block] of system.entries()) {
    if (!isObject(block) || block['type'] !== 'text') return issue(`system.${j}`, "system blocks must be of type 'text'");
    const textIssue = checkText(block, `system.${j}`);
    if (textIssue) return textIssue;
  }
  return null;
}

function checkText(block: Json, param: string): RequestIssue | null {
  const text = block['text'];
  if (typeof text !== 'string') return issue(`${param}.text`, 'Field required (a string)');
  if (text === '') return issue(param, 'text content blocks must be non-empty');
  if (isBlank(text)) return issue(param, 'text content blocks must contain non-whitespace text');
  return null;
}

function checkMessage(raw: unknown, i: number, isLast: boolean): RequestIssue | null {
  const param = `messages.${i}`;
  if (!isObject(raw)) return issue(param, 'Input should be an object with role and content');
  const role = raw['role'];
  if (role === 'system') {
    return issue(
      `${param}.role`,
      "unexpected role 'system': system text goes in the top-level `system` parameter, messages take 'user' or 'assistant'",
    );
  }
  if (role !== 'user' && role !== 'assistant') return issue(`${param}.role`, "Input should be 'user' or 'assistant'");
  const content = raw['content'];
  const prefill = isLast && role === 'assistant';
  if (typeof content === 'string') {
    if (content === '' && prefill) return null;
    if (content === '') return issue(param, 'all messages must have non-empty content except for the optional final assistant message');
    if (isBlank(content)) return issue(param, 'text content blocks must contain non-whitespace text');
    return prefill ? checkPrefillEnd(content, param) : null;
  }
  if (!Array.isArray(content)) return issue(`${param}.content`, 'Input should be a valid string or a list of content blocks');
  if (content.length === 0) {
    return prefill ? null : issue(param, 'all messages must have non-empty content except for the optional final assistant message');
  }
  let seenOther = false;
  for (const [j, block] of content.entries()) {
    const blockIssue = checkBlock(block, role, `${param}.content.${j}`);
    if (blockIssue) return blockIssue;
    const type = (block as Json)['type'];
    if (type === 'tool_result' && seenOther) {
      return issue(`${param}.content.${j}`, '`tool_result` blocks must come first in a user message, before any other content');
    }
    if (type !== 'tool_result') seenOther = true;
  }
  const lastBlock = content[content.length - 1] as Json;
  return prefill && lastBlock['type'] === 'text' ? checkPrefillEnd(String(lastBlock['text']), param) : null;
}

/** A final assistant turn is continued by the model, and the API refuses one ending in whitespace. */
function checkPrefillEnd(text: string, param: string): RequestIssue | null {
  return text.trimEnd() === text ? null : issue(param, 'final assistant content cannot end with trailing whitespace');
}

function checkBlock(block: unknown, role: 'user' | 'assistant', param: string): RequestIssue | null {
  if (!isObject(block)) return issue(param, 'Input should be a content block object');
  const type = block['type'];
  if (typeof type !== 'string' || !BLOCK_TYPES.has(type)) {
    return issue(`${param}.type`, `Input tag '${String(type)}' found using 'type' does not match any of the expected tags`);
  }
  if (role === 'user' && ASSISTANT_ONLY.has(type)) return issue(param, `\`${type}\` blocks can only be in assistant messages`);
  if (role === 'assistant' && type === 'tool_result') return issue(param, '`tool_result` blocks can only be in user messages');
  switch (type) {
    case 'text':
      return checkText(block, param);
    case 'tool_use':
      return checkToolUse(block, param);
    case 'tool_result':
      return checkToolResult(block, param);
    case 'image':
    case 'document':
      return isObject(block['source']) ? null : issue(`${param}.source`, 'Field required (an object)');
    case 'compaction':
      if (block['content'] === null || block['content'] === undefined) return null;
      if (typeof block['content'] !== 'string' || block['content'] === '')
        return issue(`${param}.content`, 'compaction content must be a non-empty string (or null for a failed compaction)');
      return null;
    default:
      return null;
  }
}

function checkToolUse(block: Json, param: string): RequestIssue | null {
  const id = block['id'];
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) return issue(`${param}.id`, "String should match pattern '^[a-zA-Z0-9_-]+$'");
  if (typeof block['name'] !== 'string' || block['name'] === '') return issue(`${param}.name`, 'Field required (a non-empty string)');
  if (!isObject(block['input'])) return issue(`${param}.input`, 'Input should be a valid dictionary');
  return null;
}

function checkToolResult(block: Json, param: string): RequestIssue | null {
  const id = block['tool_use_id'];
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    return issue(`${param}.tool_use_id`, "String should match pattern '^[a-zA-Z0-9_-]+$'");
  }
  const isError = block['is_error'];
  if (isError !== undefined && typeof isError !== 'boolean') return issue(`${param}.is_error`, 'Input should be a valid boolean');
  const content = block['content'];
  // An empty result (no content, '' or []) is valid: tools often succeed silently.
  if (content === undefined || typeof content === 'string') return null;
  if (!Array.isArray(content)) return issue(`${param}.content`, 'Input should be a valid string or a list of content blocks');
  for (const [k, part] of content.entries()) {
    const partParam = `${param}.content.${k}`;
    if (!isObject(part) || typeof part['type'] !== 'string' || !RESULT_PART_TYPES.has(part['type'])) {
      return issue(`${partParam}.type`, 'tool_result content blocks must be text, image, document or search_result');
    }
    const partIssue = part['type'] === 'text' ? checkText(part, partParam) : null;
    if (partIssue) return partIssue;
  }
  return null;
}

function checkFirstRole(messages: readonly Json[]): RequestIssue | null {
  // a compaction block stands for the turns before it: the turn it opens may be the assistant's
  if (isLiveCompactionBlock(blocksOf(messages[0])[0])) return null;
  return messages[0]?.['role'] === 'user' ? null : issue('messages.0.role', "the first message must use the 'user' role");
}

const blocksOf = (message: Json | undefined): Json[] => (Array.isArray(message?.['content']) ? (message['content'] as Json[]) : []);

/** Tool-use ids of an assistant message (none for a user message). */
function toolUseIds(message: Json | undefined): string[] {
  if (message?.['role'] !== 'assistant') return [];
  return blocksOf(message).flatMap((b) => (b['type'] === 'tool_use' ? [String(b['id'])] : []));
}

function checkPairing(messages: readonly Json[]): RequestIssue | null {
  const usedIds = new Set<string>();
  for (const [i, message] of messages.entries()) {
    const uses = toolUseIds(message);
    for (const [j, block] of blocksOf(message).entries()) {
      if (block['type'] !== 'tool_use') continue;
      const id = String(block['id']);
      if (usedIds.has(id)) return issue(`messages.${i}.content.${j}`, `\`tool_use\` ids must be unique; ${id} is used more than once`);
      usedIds.add(id);
    }
    if (uses.length > 0) {
      const next = messages[i + 1];
      const answered = new Set(
        next?.['role'] === 'user' ? blocksOf(next).flatMap((b) => (b['type'] === 'tool_result' ? [String(b['tool_use_id'])] : [])) : [],
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return issue(
          `messages.${i}`,
          `\`tool_use\` ids were found without \`tool_result\` blocks in the next message: ${missing.join(', ')}. Every \`tool_use\` block needs its \`tool_result\` block in the message right after it.`,
        );
      }
    }
    if (message['role'] === 'user') {
      const resultIssue = checkResultsAnswerPrevious(message, i, toolUseIds(messages[i - 1]));
      if (resultIssue) return resultIssue;
    }
  }
  return null;
}

function checkResultsAnswerPrevious(message: Json, i: number, previousUses: readonly string[]): RequestIssue | null {
  const open = new Set(previousUses);
  const seen = new Set<string>();
  for (const [j, block] of blocksOf(message).entries()) {
    if (block['type'] !== 'tool_result') continue;
    const id = String(block['tool_use_id']);
    if (seen.has(id))
      return issue(
        `messages.${i}.content.${j}`,
        `each \`tool_use\` takes a single result; found more than one \`tool_result\` block for ${id}`,
      );
    seen.add(id);
    if (!open.has(id)) {
      return issue(
        `messages.${i}.content.${j}`,
        `unexpected \`tool_use_id\` in a \`tool_result\` block: ${id}. A \`tool_result\` block must answer a \`tool_use\` block of the message right before it.`,
      );
    }
  }
  return null;
}
