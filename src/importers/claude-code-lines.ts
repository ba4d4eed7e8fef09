import { z } from 'zod';

import { TranscriptImportError } from './errors.js';
import type { JsonLine } from './json.js';

/**
 * The parts of a Claude Code session line (`~/.claude/projects/<project>/<session>.jsonl`)
 * the importer reads. Loose: every other field of these lines is ignored.
 */
const LineSchema = z.looseObject({ type: z.string() });

const UsageSchema = z.looseObject({
  input_tokens: z.number().optional(),
  cache_creation_input_tokens: z.number().nullable().optional(),
  cache_read_input_tokens: z.number().nullable().optional(),
  output_tokens: z.number().optional(),
});

const MessageLineSchema = z.looseObject({
  type: z.enum(['user', 'assistant']),
  uuid: z.string().optional(),
  sessionId: z.string().optional(),
  agentId: z.string().optional(),
  version: z.string().optional(),
  timestamp: z.string().optional(),
  isSidechain: z.boolean().optional(),
  isMeta: z.boolean().optional(),
  isCompactSummary: z.boolean().optional(),
  message: z.looseObject({
    id: z.string().optional(),
    model: z.string().optional(),
    content: z.union([z.string(), z.array(z.unknown())]),
    usage: UsageSchema.nullable().optional(),
  }),
});

const BoundaryLineSchema = z.looseObject({
  type: z.literal('system'),
  subtype: z.literal('compact_boundary'),
  compactMetadata: z.looseObject({ trigger: z.string().optional(), preTokens: z.number().optional() }).optional(),
});

export type MessageLine = z.infer<typeof MessageLineSchema>;
export type BoundaryLine = z.infer<typeof BoundaryLineSchema>;

export type ClassifiedLine =
  | { kind: 'message'; line: number; entry: MessageLine }
  | { kind: 'boundary'; line: number; entry: BoundaryLine }
  | { kind: 'other'; line: number; type: string };

/** Sorts each line into a message, a compact boundary or something to drop; bad lines name their number. */
export function classifyLine({ line, value }: JsonLine): ClassifiedLine {
  const base = LineSchema.safeParse(value);
  if (!base.success) {
    throw new TranscriptImportError(
      'TRANSCRIPT_INVALID',
      `line ${line}: not a Claude Code session entry (an object with a "type" is expected)`,
      {
        line,
      },
    );
  }
  const type = base.data.type;
  if (type === 'user' || type === 'assistant') {
    const parsed = MessageLineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue ? issue.path.map(String).join('.') : 'message';
      const details = parsed.error.issues.map((i) => ({ field: i.path.map(String).join('.'), message: i.message }));
      throw new TranscriptImportError('TRANSCRIPT_INVALID', `line ${line}: ${type} entry: ${field}: ${issue?.message ?? 'invalid'}`, {
        line,
        details,
      });
    }
    return { kind: 'message', line, entry: parsed.data };
  }
  if (type === 'system') {
    const boundary = BoundaryLineSchema.safeParse(value);
    if (boundary.success) return { kind: 'boundary', line, entry: boundary.data };
  }
  return { kind: 'other', line, type };
}

/** Text of a user line's content (string, or its text blocks joined). */
export function contentText(content: MessageLine['message']['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) => (typeof block === 'object' && block !== null && 'text' in block && typeof block.text === 'string' ? block.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/**
 * Context size the model saw for this call: Claude Code reports uncached, cache-write and
 * cache-read input separately, and all three were in the window.
 */
export function usageOf(entry: MessageLine): { inputTokens: number; outputTokens: number } | undefined {
  const usage = entry.message.usage;
  if (!usage || usage.input_tokens === undefined || usage.output_tokens === undefined) return undefined;
  const input = usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
  return { inputTokens: Math.round(input), outputTokens: Math.round(usage.output_tokens) };
}
