import Anthropic from '@anthropic-ai/sdk';

import { COMPACTION_BETA } from '../../../src/llm-sim/wire-anthropic.js';
import type { SimMessage } from './sim-count.js';

/**
 * The replayed agent's model call, through the official SDK to llm-sim: the whole context
 * each turn, with one `cache_control` breakpoint on the last block of the last message, as
 * Claude Code places it, so every call reads the prefix the previous call wrote and writes
 * what was added since. The agent's model is Opus-class, like the sessions' own.
 */

export const AGENT_MODEL = 'claude-opus-4-5';

/** The system prompt every arm sends: stands for the agent's own (Claude Code's is not in the transcripts). */
export const AGENT_SYSTEM_PROMPT = [
  'You are a coding agent working in the user’s repository through tools: read and edit files, run shell commands, search the code.',
  'Follow the user’s instructions and the repository’s conventions; run the tests after a change and report what changed and why.',
  'Keep going until the task is done or you need the user’s decision; say so plainly when you are blocked.',
].join('\n');

export interface AgentCall {
  /** the sim's call id (its answer's `msg_sim_<id>`): the call log entry of this call */
  callId: number;
  text: string;
  /** the whole input the provider read (uncached, cache read and cache write), as a platform reports it to compactd */
  inputTokens: number;
  wallMs: number;
}

export interface Agent {
  call(system: string, messages: readonly SimMessage[], maxTokens: number): Promise<AgentCall>;
}

export function createAgent(baseURL: string, apiKey: string): Agent {
  const client = new Anthropic({ apiKey, baseURL, maxRetries: 0, timeout: 600_000 });
  return {
    async call(system, messages, maxTokens) {
      const started = performance.now();
      const sent = withBreakpoint(messages);
      // a context that opens with a provider compaction block is sent under the compaction beta, as the API requires
      const beta = sent.some((m) => m.content.some((block) => block['type'] === 'compaction'))
        ? { headers: { 'anthropic-beta': COMPACTION_BETA } }
        : {};
      const answer = await client.messages.create(
        {
          model: AGENT_MODEL,
          max_tokens: Math.max(1, maxTokens),
          ...(system === '' ? {} : { system }),
          // the transcript's blocks are Anthropic's own shapes (the importer's normalized form), sent as they are
          messages: sent as unknown as Anthropic.MessageParam[],
        },
        beta,
      );
      const callId = Number(/^msg_sim_(\d+)$/.exec(answer.id)?.[1]);
      if (!Number.isInteger(callId)) throw new Error(`the answer id ${answer.id} names no llm-sim call`);
      const text = answer.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      const { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: written } = answer.usage;
      return { callId, text, inputTokens: input + (read ?? 0) + (written ?? 0), wallMs: performance.now() - started };
    },
  };
}

/** The messages as sent: content as blocks, the last block of the last message marked for caching. */
export function withBreakpoint(messages: readonly SimMessage[]): Array<{ role: string; content: Array<Record<string, unknown>> }> {
  return messages.map((message, i) => {
    const blocks = toBlocks(message.content);
    if (i < messages.length - 1 || blocks.length === 0) return { role: message.role, content: blocks };
    const last = blocks.length - 1;
    return {
      role: message.role,
      content: blocks.map((block, j) => (j === last ? { ...block, cache_control: { type: 'ephemeral' } } : block)),
    };
  });
}

function toBlocks(content: unknown): Array<Record<string, unknown>> {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
}
