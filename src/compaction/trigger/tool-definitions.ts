import { z } from 'zod';

import { DEFAULT_POLICY } from '../../config/policy.js';

/**
 * The agent-facing tools (SPEC §5.1, §6): `compact` asks for a compaction of the agent's own
 * conversation, `recall` searches what compaction archived. The input schemas are zod, so
 * the service parses a tool call with the very schema the model was shown.
 */

export const CompactToolInputSchema = z.strictObject({
  focus: z
    .string()
    .trim()
    .min(1)
    .max(2000)
    .optional()
    .meta({
      description:
        'What the summary must keep in detail, in a sentence or two, e.g. "the failing test names, the stack trace from ' +
        'the auth service and the agreed fix plan". Leave it out for a balanced summary.',
    }),
});
export type CompactToolInput = z.infer<typeof CompactToolInputSchema>;

export const RecallToolInputSchema = z.strictObject({
  query: z
    .string()
    .trim()
    .min(1)
    .max(1000)
    .meta({
      description:
        'A fragment as you would type it — a path (`services/session_registry.ex`), a file name, a command, a piece of an ' +
        'error line, an id — found as an exact substring; or distinctive words, e.g. `ECONNREFUSED 5432` or ' +
        '`"rate limit" -retry` (words combined with AND; "quotes" for a phrase, OR between alternatives, -word to exclude).',
    }),
  limit: z.number().int().min(1).max(50).optional().meta({ description: 'Maximum number of messages to return, 1-50 (default 10).' }),
});
export type RecallToolInput = z.infer<typeof RecallToolInputSchema>;

export type ToolName = 'compact' | 'recall';
export const TOOL_NAMES: readonly ToolName[] = ['compact', 'recall'];
export type ToolFormat = 'anthropic' | 'openai';

/**
 * The JSON Schema of a tool's input: always an object (both providers require it). A type
 * alias, not an interface, so it stays assignable to the SDKs' index-signature types.
 */
export type ObjectJsonSchema = {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: boolean;
};

/** Anthropic Messages API `tools[]` entry. */
export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: ObjectJsonSchema;
}

/** OpenAI Chat Completions `tools[]` entry. */
export interface OpenAIToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: ObjectJsonSchema };
}

export interface ToolDefinitionOptions {
  /** active tokens below which `compact` is refused (the tenant's `toolMinTokens`) */
  minTokens?: number;
}

function describeCompact(minTokens: number): string {
  return [
    'Compact this conversation to free room in your context window. A background job summarizes older, less important',
    'messages and replaces them with one archive message near the start of the history that carries the summaries; recent',
    'messages, the newest user message and unfinished tool exchanges stay verbatim. Nothing is lost: the originals are',
    'archived, and the `recall` tool finds their exact text later.',
    'Call it when the context is getting full (around 70% of the window or more), at a natural break between',
    'tasks or phases, or when long tool outputs you no longer need fill the history. Do not call it repeatedly: one',
    'compaction runs at a time (calling again returns the running one), and it is refused while the conversation holds',
    `fewer than ${minTokens.toLocaleString('en-US')} tokens.`,
    'It runs asynchronously: the call returns at once with a job, you keep working, and your following turns see the',
    'compacted history once the job completes. Use `focus` to name what must survive in detail.',
  ].join(' ');
}

const RECALL_DESCRIPTION = [
  'Search the archived originals of this conversation: the exact messages, tool calls and tool results that compaction',
  'summarized, masked or truncated out of your context. Use it to recover a detail a summary left out (an error message,',
  "file path, command, identifier, number or a user's exact instruction) instead of guessing or redoing work.",
  'Messages that hold the query as an exact substring come first, then matches by words. Each names its seq, role,',
  'tool and the id of the batch whose summary covers it, with its matching lines. A path relative to the working',
  'directory or a bare file name finds the file; for words, English is stemmed ("failing" finds "failed") and stop',
  'words are ignored. Messages still in your context are not searched.',
].join(' ');

/** A zod input schema as the plain JSON Schema object both providers accept (no `$schema` key). */
function inputJsonSchema(schema: z.ZodType): ObjectJsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return json as unknown as ObjectJsonSchema;
}

function definitionParts(name: ToolName, options: ToolDefinitionOptions) {
  switch (name) {
    case 'compact':
      return {
        description: describeCompact(options.minTokens ?? DEFAULT_POLICY.toolMinTokens),
        schema: inputJsonSchema(CompactToolInputSchema),
      };
    case 'recall':
      return { description: RECALL_DESCRIPTION, schema: inputJsonSchema(RecallToolInputSchema) };
  }
}

/** The definition of one agent tool in a provider's tool format. */
export function toolDefinition(name: ToolName, format: 'anthropic', options?: ToolDefinitionOptions): AnthropicToolDefinition;
export function toolDefinition(name: ToolName, format: 'openai', options?: ToolDefinitionOptions): OpenAIToolDefinition;
export function toolDefinition(
  name: ToolName,
  format: ToolFormat,
  options?: ToolDefinitionOptions,
): AnthropicToolDefinition | OpenAIToolDefinition;
export function toolDefinition(
  name: ToolName,
  format: ToolFormat,
  options: ToolDefinitionOptions = {},
): AnthropicToolDefinition | OpenAIToolDefinition {
  const { description, schema } = definitionParts(name, options);
  return format === 'anthropic'
    ? { name, description, input_schema: schema }
    : { type: 'function', function: { name, description, parameters: schema } };
}
