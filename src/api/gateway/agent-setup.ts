import { type AgentSetup, AgentSetupSchema } from '../../queue/job-options.js';
import type { GatewayProvider } from './identity.js';

/**
 * What a compaction the gateway starts needs to use the provider's own compaction (SPEC §5.10):
 * the agent's model, system prompt and tools as this request sends them, so that a `native`
 * compaction sends the agent's own prefix and reads its prompt cache. Only Anthropic Messages
 * requests carry it: an OpenAI compaction item can only be sent back through the Responses
 * API, never in a chat-completions request. Undefined when the body's fields are not usable.
 */
export function agentSetupOf(provider: GatewayProvider, body: Record<string, unknown>): AgentSetup | undefined {
  if (provider !== 'anthropic') return undefined;
  const parsed = AgentSetupSchema.safeParse({
    provider,
    model: body['model'],
    ...(body['system'] === undefined ? {} : { system: body['system'] }),
    ...(body['tools'] === undefined ? {} : { tools: body['tools'] }),
  });
  return parsed.success ? parsed.data : undefined;
}
