import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { listRealTranscripts, loadRealTranscript } from '../../../harness/transcripts.js';
import { validateAnthropicRequest } from '../../../src/llm-sim/validate-anthropic.js';
import { validateOpenAIRequest } from '../../../src/llm-sim/validate-openai.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Property over the shared real transcripts (SPEC §6.1 "ready to send"): for every
 * transcript file, the context a platform would send — both formats, as imported, after
 * a compaction and after its revert — is a request the provider accepts (the llm-sim
 * validators). Sampled deterministically to stay near a minute on a shared machine: each
 * file is seeded once with a policy that rotates with its index (i mod 3) and compacted
 * with two strategies that alternate with its parity (summarize + auto, reset + mask), so
 * every policy meets every strategy across the set and every strategy sees half the files.
 * Summaries come from the local summarizer.
 */

const STRATEGY_PAIRS = [
  ['summarize', 'auto'],
  ['reset', 'mask'],
] as const;
const POLICIES = [
  { name: 'default', policy: { auto: false } },
  // small chunks and at most two live batches: the compaction records a consolidation, checked too
  {
    name: 'keepRecent 2, consolidating',
    policy: { auto: false, keepRecent: 2, chunkTokens: 2_000, summaryMaxTokens: 1_000, maxLiveBatches: 2 },
  },
  { name: 'clip role user', policy: { auto: false, keepRecent: 4, clipArchiveRole: 'user' } },
] as const;

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

async function expectValidContext(id: string, when: string): Promise<void> {
  for (const format of ['anthropic', 'openai'] as const) {
    const res = await stack.app.inject({ method: 'GET', url: `/v1/conversations/${id}/context?format=${format}`, headers: stack.auth() });
    expect(res.statusCode, res.body).toBe(200);
    const validate = format === 'anthropic' ? validateAnthropicRequest : validateOpenAIRequest;
    expect(validate(res.json()), `${format} context ${when}`).toBeNull();
  }
}

/** The longest conversation of a file (τ-bench files hold many). */
function longestConversation(file: string) {
  const { conversations } = loadRealTranscript(file);
  return conversations.reduce((best, c) => (c.messages.length > best.messages.length ? c : best));
}

describe('every context of every real transcript is a valid provider request', () => {
  listRealTranscripts().forEach((transcript, index) => {
    const { name, policy } = POLICIES[index % POLICIES.length]!;
    const strategies = STRATEGY_PAIRS[index % STRATEGY_PAIRS.length]!;
    it(`${transcript.name} (${name}; ${strategies.join(', ')})`, async () => {
      const id = `ctx-${index}`;
      await seedConversation(stack, id, longestConversation(transcript.path).messages, { policy });
      await expectValidContext(id, 'as imported');
      for (const strategy of strategies) {
        const job = await waitForJob(stack, (await compact(stack, id, { strategy })).id);
        expect(['completed', 'noop'], `${strategy}: ${JSON.stringify(job.error)}`).toContain(job.status);
        await expectValidContext(id, `after ${strategy}`);
        if (job.status !== 'completed') continue;
        if (job.result.consolidationJobId) {
          const consolidation = await waitForJob(stack, job.result.consolidationJobId);
          expect(['completed', 'noop']).toContain(consolidation.status);
          await expectValidContext(id, `after the consolidation following ${strategy}`);
        }
        const reverted = await stack.app.inject({ method: 'POST', url: `/v1/jobs/${job.id}/revert`, headers: stack.auth() });
        expect(reverted.statusCode, reverted.body).toBe(200);
        await expectValidContext(id, `after reverting ${strategy}`);
      }
    });
  });
});
