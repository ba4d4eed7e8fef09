import { z } from 'zod';

export const ToolQuerySchema = z.object({
  format: z
    .enum(['anthropic', 'openai'])
    .default('anthropic')
    .meta({ description: 'anthropic: Messages API `tools[]` entry; openai: Chat Completions `tools[]` entry' }),
});

const JsonSchemaObject = z.object({
  type: z.literal('object'),
  properties: z.record(z.string(), z.record(z.string(), z.unknown())),
  required: z.array(z.string()).optional(),
  additionalProperties: z.boolean().optional(),
});

const AnthropicToolSchema = z
  .object({ name: z.string(), description: z.string(), input_schema: JsonSchemaObject })
  .meta({ id: 'AnthropicTool', description: 'pass as an element of `tools` in a Messages API request' });

const OpenAIToolSchema = z
  .object({
    type: z.literal('function'),
    function: z.object({ name: z.string(), description: z.string(), parameters: JsonSchemaObject }),
  })
  .meta({ id: 'OpenAITool', description: 'pass as an element of `tools` in a Chat Completions request' });

export const ToolDefinitionSchema = z.union([AnthropicToolSchema, OpenAIToolSchema]);
