import { z } from 'zod';

import { pushAll } from './push-all.js';
import type { Block, ImageBlock, NormalizedMessage, Role, TextBlock, ToolResultBlock } from './types.js';

/**
 * Ingestion normalization (SPEC §4, §6.1): Anthropic-format (plus role system/tool) and
 * OpenAI Chat Completions messages become stored Anthropic-style blocks. Pure: returns
 * field-level issues instead of throwing, so the API can answer 400 naming the field.
 */

export type MessageFormat = 'anthropic' | 'openai';
export const MESSAGE_FORMATS: readonly MessageFormat[] = ['anthropic', 'openai'];

export interface FieldIssue {
  field: string;
  message: string;
}

export type NormalizeResult = { ok: true; messages: NormalizedMessage[] } | { ok: false; issues: FieldIssue[] };

const UsageSchema = z.strictObject({
  inputTokens: z.number().int().nonnegative().optional(),
  outputTokens: z.number().int().nonnegative().optional(),
});
const MetadataSchema = z.record(z.string(), z.unknown());
/** compactd's own field beside the provider's: `true` pins the message (never archived, SPEC §5.6a) */
const PinnedSchema = z.boolean({ error: 'must be a boolean (true pins the message)' });

const TextBlockSchema = z.strictObject({ type: z.literal('text'), text: z.string(), cache_control: z.unknown().optional() });
const ImageBlockSchema = z.strictObject({ type: z.literal('image'), source: z.record(z.string(), z.unknown()) });
const ToolUseBlockSchema = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(256),
  input: z.unknown(),
  cache_control: z.unknown().optional(),
});
const ToolResultBlockSchema = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(256),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema]))]).default(''),
  is_error: z.boolean().optional(),
  cache_control: z.unknown().optional(),
});
const AnthropicBlockSchema = z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema, ToolUseBlockSchema, ToolResultBlockSchema]);

const AnthropicMessageSchema = z.strictObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(AnthropicBlockSchema)]),
  name: z.string().max(256).optional(),
  usage: UsageSchema.optional(),
  metadata: MetadataSchema.optional(),
  pinned: PinnedSchema.optional(),
});

const OpenAIContentPartSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({
    type: z.literal('image_url'),
    image_url: z.strictObject({ url: z.string(), detail: z.string().optional() }),
  }),
]);
const OpenAIToolCallSchema = z.strictObject({
  id: z.string().min(1).max(256),
  type: z.literal('function').default('function'),
  function: z.strictObject({ name: z.string().min(1).max(256), arguments: z.string() }),
});
const OpenAIMessageSchema = z.strictObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(OpenAIContentPartSchema), z.null()]).optional(),
  name: z.string().max(256).optional(),
  tool_calls: z.array(OpenAIToolCallSchema).optional(),
  tool_call_id: z.string().min(1).max(256).optional(),
  refusal: z.string().nullable().optional(),
  usage: UsageSchema.optional(),
  metadata: MetadataSchema.optional(),
  pinned: PinnedSchema.optional(),
});

type AnthropicMessage = z.infer<typeof AnthropicMessageSchema>;
type OpenAIMessage = z.infer<typeof OpenAIMessageSchema>;

/** Normalizes one append's messages; `fieldPrefix` names them in issues (e.g. "messages"). */
export function normalizeMessages(input: readonly unknown[], format: MessageFormat, fieldPrefix = 'messages'): NormalizeResult {
  const issues: FieldIssue[] = [];
  const messages: NormalizedMessage[] = [];
  input.forEach((raw, index) => {
    const field = `${fieldPrefix}.${index}`;
    const textIssue = findInvalidText(raw, field);
    if (textIssue) {
      issues.push(textIssue);
      return;
    }
    const result = format === 'anthropic' ? normalizeAnthropic(raw, field) : normalizeOpenAI(raw, field);
    if ('issues' in result) pushAll(issues, result.issues);
    else messages.push(result.message);
  });
  return issues.length > 0 ? { ok: false, issues } : { ok: true, messages };
}

type One = { message: NormalizedMessage } | { issues: FieldIssue[] };

function zodIssues(error: z.ZodError, field: string): FieldIssue[] {
  return error.issues.map((issue) => ({
    field: [field, ...issue.path.map(String)].join('.'),
    message: issue.code === 'invalid_union' || issue.code === 'invalid_value' ? describeUnion(issue) : issue.message,
  }));
}

function describeUnion(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  return issue.message;
}

function normalizeAnthropic(raw: unknown, field: string): One {
  const parsed = AnthropicMessageSchema.safeParse(raw);
  if (!parsed.success) return { issues: zodIssues(parsed.error, field) };
  const m: AnthropicMessage = parsed.data;
  const content: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content.map(stripCacheControl);
  const issue = checkBlocksForRole(m.role, content, field);
  if (issue) return { issues: [issue] };
  return { message: withOptional({ role: m.role, content }, m) };
}

function normalizeOpenAI(raw: unknown, field: string): One {
  const parsed = OpenAIMessageSchema.safeParse(raw);
  if (!parsed.success) return { issues: zodIssues(parsed.error, field) };
  const m: OpenAIMessage = parsed.data;
  if (m.role === 'tool') {
    if (!m.tool_call_id) return { issues: [{ field: `${field}.tool_call_id`, message: 'required for role "tool"' }] };
    const result: ToolResultBlock = { type: 'tool_result', tool_use_id: m.tool_call_id, content: openAIText(m.content) };
    return { message: withOptional({ role: 'tool', content: [result] }, m) };
  }
  if (m.tool_call_id !== undefined) {
    return { issues: [{ field: `${field}.tool_call_id`, message: 'only allowed on role "tool"' }] };
  }
  if (m.tool_calls && m.role !== 'assistant') {
    return { issues: [{ field: `${field}.tool_calls`, message: 'only allowed on role "assistant"' }] };
  }
  const role: Role = m.role === 'developer' ? 'system' : m.role;
  const content: Block[] = openAIParts(m.content);
  for (const call of m.tool_calls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) });
  }
  return { message: withOptional({ role, content }, m) };
}

function openAIParts(content: OpenAIMessage['content']): Block[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map((part): TextBlock | ImageBlock =>
    part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image', source: { type: 'url', url: part.image_url.url } },
  );
}

function openAIText(content: OpenAIMessage['content']): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : `[image: ${part.image_url.url}]`)).join('\n');
}

/**
 * Tool-call arguments are a JSON string on the OpenAI wire; malformed JSON is kept verbatim,
 * and so is JSON whose escapes spell what Postgres cannot store (`\u0000`, a lone surrogate):
 * the string itself holds only the escape, parsed it would hold the character.
 */
function parseArguments(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    const parsed = JSON.parse(args) as unknown;
    return findInvalidText(parsed, 'arguments') === undefined ? parsed : args;
  } catch {
    return args;
  }
}

function stripCacheControl(block: z.infer<typeof AnthropicBlockSchema>): Block {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} };
    case 'tool_result':
      return block.is_error === undefined
        ? { type: 'tool_result', tool_use_id: block.tool_use_id, content: block.content }
        : { type: 'tool_result', tool_use_id: block.tool_use_id, content: block.content, is_error: block.is_error };
    case 'image':
      return block;
  }
}

function checkBlocksForRole(role: Role, content: Block[], field: string): FieldIssue | undefined {
  const index = content.findIndex(
    (block) => (block.type === 'tool_use' && role !== 'assistant') || (block.type === 'tool_result' && role !== 'user' && role !== 'tool'),
  );
  if (index < 0) return undefined;
  const block = content[index];
  const allowed = block?.type === 'tool_use' ? 'assistant messages' : 'user or tool messages';
  return { field: `${field}.content.${index}`, message: `${block?.type} blocks are only allowed in ${allowed}` };
}

function withOptional(
  base: { role: Role; content: Block[] },
  m: {
    name?: string | undefined;
    usage?: z.infer<typeof UsageSchema> | undefined;
    metadata?: Record<string, unknown> | undefined;
    pinned?: boolean | undefined;
  },
): NormalizedMessage {
  const out: NormalizedMessage = { ...base };
  if (m.name !== undefined) out.name = m.name;
  if (m.usage !== undefined) {
    const usage: NonNullable<NormalizedMessage['usage']> = {};
    if (m.usage.inputTokens !== undefined) usage.inputTokens = m.usage.inputTokens;
    if (m.usage.outputTokens !== undefined) usage.outputTokens = m.usage.outputTokens;
    out.usage = usage;
  }
  if (m.metadata !== undefined) out.metadata = m.metadata;
  if (m.pinned === true) out.pinned = true;
  return out;
}

/**
 * Postgres text/jsonb cannot hold U+0000, and jsonb rejects unpaired surrogates: find the
 * first such string (keys included) and name its field, so it is a 400 and never a 500.
 */
export function findInvalidText(value: unknown, field: string, depth = 0): FieldIssue | undefined {
  if (depth > 64) return { field, message: 'nested too deeply (more than 64 levels)' };
  if (typeof value === 'string') return describeBadString(value, field);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const issue = findInvalidText(value[i], `${field}.${i}`, depth + 1);
      if (issue) return issue;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const keyIssue = describeBadString(key, `${field}.${key}`);
      if (keyIssue) return keyIssue;
      const issue = findInvalidText(child, `${field}.${key}`, depth + 1);
      if (issue) return issue;
    }
  }
  return undefined;
}

function describeBadString(value: string, field: string): FieldIssue | undefined {
  if (value.includes('\u0000')) return { field, message: 'must not contain NUL (U+0000) characters' };
  if (!value.isWellFormed()) return { field, message: 'must be well-formed Unicode (unpaired surrogate found)' };
  return undefined;
}

/** Tool-call ids a normalized message opens (tool_use) and answers (tool_result). */
export function toolIdsOf(content: readonly Block[]): { opens: string[]; answers: string[] } {
  const opens: string[] = [];
  const answers: string[] = [];
  for (const block of content) {
    if (block.type === 'tool_use') opens.push(block.id);
    else if (block.type === 'tool_result') answers.push(block.tool_use_id);
  }
  return { opens, answers };
}
