import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import {
  CompactToolInputSchema,
  RecallToolInputSchema,
  TOOL_NAMES,
  toolDefinition,
} from '../../../../src/compaction/trigger/tool-definitions.js';

/**
 * The providers' documented rules for a tool definition, as schemas. Both APIs reject
 * unknown keys in a tool entry, so the shapes are strict.
 */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const JSON_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array', 'null'] as const;

const PropertySchema = z.looseObject({
  type: z.enum(JSON_TYPES),
  description: z.string().min(20),
});
const InputSchema = z
  .strictObject({
    type: z.literal('object'),
    properties: z.record(z.string(), PropertySchema),
    required: z.array(z.string()).optional(),
    additionalProperties: z.boolean().optional(),
  })
  .refine((schema) => (schema.required ?? []).every((key) => key in schema.properties), 'every required key is a property');

const AnthropicTool = z.strictObject({
  name: z.string().regex(TOOL_NAME),
  description: z.string().min(1),
  input_schema: InputSchema,
});
const OpenAITool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().regex(TOOL_NAME),
    // the tightest published limit on function descriptions (Assistants API)
    description: z.string().min(1).max(1024),
    parameters: InputSchema,
  }),
});

// Compile-time: the official SDKs accept the definitions as request parameters.
const anthropicTools: Anthropic.Messages.Tool[] = TOOL_NAMES.map((name) => toolDefinition(name, 'anthropic'));
const openaiTools: OpenAI.Chat.Completions.ChatCompletionTool[] = TOOL_NAMES.map((name) => toolDefinition(name, 'openai'));
const anthropicRequest: Anthropic.Messages.MessageCreateParamsNonStreaming = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [],
  tools: anthropicTools,
};
const openaiRequest: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = { model: 'gpt-4o', messages: [], tools: openaiTools };

describe('tool definitions', () => {
  it.each(TOOL_NAMES)('%s is a valid Anthropic and OpenAI tool, the same in both', (name) => {
    const anthropic = AnthropicTool.parse(toolDefinition(name, 'anthropic'));
    const openai = OpenAITool.parse(toolDefinition(name, 'openai'));
    expect(anthropic.name).toBe(name);
    expect(openai.function).toEqual({ name, description: anthropic.description, parameters: anthropic.input_schema });
    // plain JSON: survives serialization unchanged, no `$schema` dialect key
    expect(JSON.parse(JSON.stringify(anthropic))).toEqual(anthropic);
    expect(anthropic.input_schema).not.toHaveProperty('$schema');
    expect(anthropicRequest.tools).toContainEqual(anthropic);
    expect(openaiRequest.tools).toContainEqual(openai);
  });

  it('describes compact with the refusal threshold it is given, and points to recall', () => {
    const compact = toolDefinition('compact', 'anthropic', { minTokens: 25_000 });
    expect(compact.description).toContain('fewer than 25,000 tokens');
    expect(toolDefinition('compact', 'anthropic').description).toContain('fewer than 10,000 tokens');
    expect(compact.description).toMatch(/`recall`/);
    expect(compact.description).toMatch(/asynchronous/i);
    expect(compact.input_schema.required).toBeUndefined();
  });

  it('requires a query for recall and bounds its limit', () => {
    const recall = toolDefinition('recall', 'openai').function.parameters;
    expect(recall.required).toEqual(['query']);
    expect(recall.properties['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 });
  });
});

/** What the model is shown (the JSON Schema) and what the service parses (zod) agree on inputs. */
interface InputCase {
  name: 'compact' | 'recall';
  parser: z.ZodType;
  valid: unknown[];
  invalid: unknown[];
}

describe.each<InputCase>([
  {
    name: 'compact',
    parser: CompactToolInputSchema,
    valid: [{}, { focus: 'keep the failing test names' }],
    invalid: [{ focus: 3 }, { focus: '' }, { focus: 'x', extra: true }, { focus: 'x'.repeat(2001) }],
  },
  {
    name: 'recall',
    parser: RecallToolInputSchema,
    valid: [{ query: 'ECONNREFUSED' }, { query: '"rate limit" -retry', limit: 50 }],
    invalid: [{}, { query: '' }, { query: 'x', limit: 0 }, { query: 'x', limit: 51 }, { query: 'x', limit: 2.5 }, { query: 'x', page: 2 }],
  },
])('$name input', ({ name, parser, valid, invalid }) => {
  const shown = z.fromJSONSchema(toolDefinition(name, 'anthropic').input_schema);

  it.each(valid)('accepts %j', (input) => {
    expect(parser.safeParse(input).success).toBe(true);
    expect(shown.safeParse(input).success).toBe(true);
  });

  it.each(invalid)('rejects %j', (input) => {
    expect(parser.safeParse(input).success).toBe(false);
    expect(shown.safeParse(input).success).toBe(false);
  });
});
