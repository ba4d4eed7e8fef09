import type { LlmUsage } from './port.js';

/**
 * The providers' own compaction (SPEC §5.10, strategy `native`): Anthropic's on-demand
 * compaction (beta `compact-2026-09-04`: the conversation with top-level `compaction:
 * {type: "summarize"}` answers one `{type: "compaction", content, signature}` block) and
 * OpenAI's `POST /responses/compact` (the kept user messages plus one opaque `{type:
 * "compaction", encrypted_content}` item). The item must later open the agent's context
 * byte-exact, so adapters return it exactly as the provider sent it.
 */

/** The beta header Anthropic's on-demand compaction and every request carrying its block need. */
export const ANTHROPIC_COMPACTION_BETA = 'compact-2026-09-04';

export type NativeProvider = 'anthropic' | 'openai';

export interface NativeCompactionRequest {
  model: string;
  /** the agent's system prompt as it sends it (Anthropic `system`, OpenAI `instructions`) */
  system?: unknown;
  /** the agent's tool definitions as it sends them: the same prefix reads the agent's prompt cache */
  tools?: readonly unknown[];
  /** the span in the provider's format (Anthropic messages, Responses input items) */
  messages: readonly unknown[];
  /** extra instructions for the provider's summary (Anthropic `compaction.instructions`) */
  instructions?: string;
}

export interface NativeCompactionResult {
  provider: NativeProvider;
  /** the provider's block or item, exactly as returned */
  item: Record<string, unknown>;
  /** the summary when the provider shows it (Anthropic); null when the item is opaque (OpenAI) */
  summary: string | null;
  /** the beta header the item needs on every request that carries it, if any */
  beta: string | null;
  model: string;
  usage: LlmUsage;
  latencyMs: number;
}

export interface NativeCompactor {
  readonly provider: NativeProvider;
  compact(request: NativeCompactionRequest, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<NativeCompactionResult>;
}

export type NativeCompactors = Partial<Record<NativeProvider, NativeCompactor>>;
