import { z } from 'zod';

import { MAX_POLICY_TOKENS } from '../config/policy.js';
import { type JsonBounds, jsonProblem, safeText } from '../lib/text-safety.js';

/** What the providers' own compaction needs to compact a conversation as its agent sends it (SPEC §5.10). */
export const AgentSetupSchema = z
  .strictObject({
    provider: z.enum(['anthropic', 'openai']),
    model: safeText({ min: 1, max: 200 }),
    system: z.union([z.string(), z.array(z.record(z.string(), z.unknown())).max(1_000)]).optional(),
    tools: z.array(z.record(z.string(), z.unknown())).max(1_000).optional(),
  })
  .superRefine((agent, ctx) => {
    // stored on the job row (jsonb): no NUL or lone surrogate, bounded like other free-form JSON
    const problem = jsonProblem(agent, AGENT_SETUP_BOUNDS);
    if (problem) ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });

/** An agent's system prompt and tool definitions: large for a prompt, small for a job row. */
const AGENT_SETUP_BOUNDS: JsonBounds = { maxDepth: 64, maxChars: 256 * 1024 };
export type AgentSetup = z.infer<typeof AgentSetupSchema>;

/**
 * Options of one compaction (SPEC §6.1), stored on the job row and read back by workers.
 * Also the body schema of `POST /v1/conversations/:id/compactions`.
 */
export const CompactionOptionsSchema = z.strictObject({
  strategy: z.enum(['auto', 'summarize', 'mask', 'reset', 'native']).optional(),
  agent: AgentSetupSchema.optional().meta({
    description:
      "the agent's provider, model, system prompt and tools as it sends them: strategy native compacts with them (the gateway fills it in)",
  }),
  agentWaiting: z
    .boolean()
    .optional()
    .meta({ description: 'the agent blocks on this compaction (auto then prefers parallel chunks to one long provider call)' }),
  keepRecent: z.number().int().min(0).max(100_000).optional(),
  target: z
    .strictObject({
      ratio: z.number().gt(0).lt(1).optional(),
      tokens: z.number().int().min(0).max(MAX_POLICY_TOKENS).optional(),
    })
    .refine((t) => t.ratio === undefined || t.tokens === undefined, 'give ratio or tokens, not both')
    .optional(),
  focus: safeText({ min: 1, max: 4_000 }).optional(),
  model: safeText({ min: 1, max: 200 })
    .optional()
    .meta({ description: 'summarizer model (`provider:model` or a model): must be served by a configured provider' }),
  onLLMFailure: z.enum(['fallback', 'fail']).optional(),
});
export type CompactionOptions = z.infer<typeof CompactionOptionsSchema>;
