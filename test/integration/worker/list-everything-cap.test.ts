import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { chunkOutputBudget, outputCap } from '../../../src/compaction/plan/budget.js';
import {
  buildSummarizeRequest,
  completeLines,
  holdsEverySection,
  rankChunkIdentifiers,
  requestedLengthTokens,
} from '../../../src/compaction/summarize/index.js';
import { isMergeRequest, wordsFor } from '../../../src/compaction/summarize/prompt.js';
import type { HistoryMessage } from '../../../src/compaction/types.js';
import { loadConfig } from '../../../src/config/env.js';
import { mergePolicy } from '../../../src/config/policy.js';
import { listChunks } from '../../../src/db/repos/chunks.js';
import { createSummarizers } from '../../../src/llm/create-summarizer.js';
import { PaceBook } from '../../../src/llm/hedge-timing.js';
import { outputLimitFor } from '../../../src/llm/models.js';
import { PROFILES } from '../../../src/llm-sim/profiles.js';
import type { CallRecord } from '../../../src/llm-sim/state.js';
import { summarizeGuarded } from '../../../src/worker/guarded-summary.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * A compaction through the real worker (queue, steps, Anthropic SDK) against llm-sim's
 * list-everything profile: every answer lists each path, error and sentence it sees and runs
 * into its cap. Each chunk still makes exactly one call, sized to what the chunk holds rather
 * than to its share of the clip-archive budget; the cut answer's text is the chunk's summary,
 * the sections it never reached completed from the source without a call; nothing falls back.
 */

const MODEL = 'claude-haiku-4-5';
let sim: TestLlmSim;
let stack: Stack;
beforeAll(async () => {
  sim = await startTestLlmSim();
  stack = await createStack({ env: { ANTHROPIC_BASE_URL: sim.url, COMPACTD_SUMMARIZER: `anthropic:${MODEL}` } });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.setFaults({});
  // the list-everything answers, paced by length but quicker than Haiku's 70 tokens/s
  sim.control.setProfile({
    ...PROFILES['list-everything']!,
    name: 'list-everything-brisk',
    firstTokenMs: 50,
    outputTokensPerSecond: 20_000,
  });
});

const session = () => loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages;
type Body = { max_tokens: number; messages: Array<{ content: unknown }> };
const lastText = (call: CallRecord) => {
  const content = (call.body as Body).messages.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};
/** The lines the model wrote before the last complete one (that one may be a heading the cap came right after). */
const written = (call: CallRecord) =>
  completeLines(call.answerText ?? '')
    .split('\n')
    .slice(0, -1)
    .join('\n');

describe('list-everything answers: one call per chunk, the cut answer kept', () => {
  it('makes exactly one call per chunk, each cut at a cap sized to its chunk, and keeps what each wrote', async () => {
    const policy = { auto: false, keepRecent: 6 };
    await seedConversation(stack, 'lists-everything', session(), { policy });
    const job = await compact(stack, 'lists-everything', { strategy: 'summarize' });
    const done = await waitForJob(stack, job.id);
    expect(done.status, JSON.stringify(done.error ?? done.result)).toBe('completed');
    expect(done.result.fallbacks).toEqual([]);

    const chunks = await listChunks(stack.deps.db, job.id);
    expect(chunks.length).toBeGreaterThan(2);
    const calls = sim.control.callLog().filter((call) => call.endpoint === '/v1/messages' && !isMergeRequest(JSON.stringify(call.body)));
    expect(calls).toHaveLength(chunks.length);
    // every answer ran into its cap: the case that used to be asked again in series, then replaced locally
    expect(calls.every((call) => call.stop === 'length' && call.outputTokens === call.maxTokens)).toBe(true);

    const merged = mergePolicy(policy);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ status: 'done', calls: 1, fallback: null, provider: 'anthropic' });
      const summary = chunk.summary ?? '';
      const own = calls.filter((call) => written(call).length > 0 && summary.startsWith(written(call)));
      expect(own, `chunk ${chunk.idx}: the summary opens with what exactly one call wrote`).toHaveLength(1);
      const [call] = own;
      // the directive asks for the chunk's share; the cap fits what the chunk holds
      expect(requestedLengthTokens(lastText(call!))).toBe(Math.round(wordsFor(chunk.outputBudget) / 0.6));
      expect(call!.maxTokens).toBe(
        outputCap(Math.max(chunk.outputBudget, chunkOutputBudget(merged, chunk.sourceTokens)), outputLimitFor(MODEL)),
      );
      expect(holdsEverySection(summary)).toBe(true);
    }
    // the share was smaller than what a chunk holds for at least one chunk: its cap is above the share's
    expect(chunks.some((chunk) => chunkOutputBudget(merged, chunk.sourceTokens) > chunk.outputBudget)).toBe(true);
  }, 120_000);

  it('a cut answer teaches the step the pace of its model, so the hedge of the next call is timed by it', async () => {
    const messages: HistoryMessage[] = session()
      .filter((m) => m.role !== 'system')
      .slice(0, 40)
      .map((m, i) => ({ seq: i + 1, role: m.role, kind: 'message', content: m.content, tokens: 0, toolUseIds: [], toolResultIds: [] }));
    const policy = mergePolicy({});
    const paces = new PaceBook();
    const result = await summarizeGuarded({
      buildRequest: (target, cap) =>
        buildSummarizeRequest(messages, null, policy, {
          countTokens: (text) => Math.ceil(text.length / 4),
          fenceId: 'feedc0de00000002',
          maxOutputTokens: target,
          ...(cap === undefined ? {} : { capTokens: cap }),
        }),
      budget: 320,
      identifiers: rankChunkIdentifiers(messages).ordered,
      selection: { provider: 'anthropic', model: MODEL },
      summarizers: createSummarizers(loadConfig({ ANTHROPIC_BASE_URL: sim.url })),
      policy,
      signal: new AbortController().signal,
      paces,
    });
    const [call] = sim.control.callLog();
    expect(call?.stop).toBe('length');
    expect(result).toMatchObject({ calls: 1, fallback: null });
    expect(result.completedSections.length).toBeGreaterThan(0);
    expect(paces.get('anthropic', MODEL).samples).toBe(1);
  });
});
