import { type AgentSetup, AgentSetupSchema } from '../../queue/job-options.js';
import { type GatewayWire, providerOfWire } from './wire.js';

/**
 * What a compaction the gateway starts needs to use the provider's own compaction (SPEC §5.10):
 * the agent's model, system prompt and tools as this request sends them, so that a `native`
 * compaction sends the agent's own prefix and reads its prompt cache. Anthropic Messages
 * requests carry their `system`; Responses requests their `instructions` (OpenAI's compaction
 * item goes back only through the Responses API). Chat-completions requests carry none: their
 * item could never be sent back. Undefined when the body's fields are not usable.
 */
export function agentSetupOf(wire: GatewayWire, body: Record<string, unknown>): AgentSetup | undefined {
  if (wire === 'openai') return undefined;
  const system = wire === 'anthropic' ? body['system'] : body['instructions'];
  const parsed = AgentSetupSchema.safeParse({
    provider: providerOfWire(wire),
    model: body['model'],
    ...(system === undefined || system === null ? {} : { system }),
    ...(body['tools'] === undefined ? {} : { tools: body['tools'] }),
  });
  return parsed.success ? parsed.data : undefined;
}
