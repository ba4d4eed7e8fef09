import { describe, expect, it } from 'vitest';

import type { SummarizeRequest } from '../../../src/compaction/types.js';
import { DEFAULT_PACE, HedgeBudget } from '../../../src/llm/hedge-timing.js';
import { LlmError, ZERO_USAGE } from '../../../src/llm/port.js';
import { answerWithinCap, type SendAnswer } from '../../../src/worker/hedged-answer.js';

/**
 * The step's answer with no second request in series (SPEC §5.4, §5.6a): an answer stopped at
 * its cap is the step's answer, up to its last complete line, however little of the summary
 * it reached; only an answer cut before any complete line is an error.
 */

function cutError(text: string): LlmError {
  return new LlmError('invalid_output', 'anthropic returned an answer truncated at the output limit', {
    provider: 'anthropic',
    retryable: false,
    code: 'LLM_OUTPUT_TRUNCATED',
    cut: { text, usage: { ...ZERO_USAGE, outputTokens: 600 }, latencyMs: 40 },
  });
}

/** The requests a step sent, each with the length its directive asked for and its cap. */
function sender(answer: (request: SummarizeRequest) => Promise<string>): { send: SendAnswer; sent: SummarizeRequest[] } {
  const sent: SummarizeRequest[] = [];
  return {
    sent,
    send: async (request) => {
      sent.push(request);
      return answer(request);
    },
  };
}

const request = (target: number, cap?: number): SummarizeRequest => ({
  system: 'sys',
  messages: [{ role: 'user', content: `summarize in ${target}` }],
  maxOutputTokens: cap ?? target,
});

async function answer(send: SendAnswer) {
  return answerWithinCap({
    budget: 320,
    cap: 1178,
    buildRequest: request,
    pace: DEFAULT_PACE,
    signal: new AbortController().signal,
    send,
    hedges: new HedgeBudget(),
  });
}

describe('answerWithinCap', () => {
  it('an answer cut before its last section is kept up to its last complete line, with no second request', async () => {
    const { send, sent } = sender(async () => {
      throw cutError('## TASK STATE\n- listing every path\n## FILES\n- src/a.ts\n- src/b.t');
    });
    await expect(answer(send)).resolves.toEqual({ text: '## TASK STATE\n- listing every path\n## FILES\n- src/a.ts', cut: true });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.maxOutputTokens).toBe(1178);
  });

  it('an answer that ends on its own is not cut', async () => {
    const { send, sent } = sender(async () => '## TASK STATE\n- done');
    await expect(answer(send)).resolves.toEqual({ text: '## TASK STATE\n- done', cut: false });
    expect(sent).toHaveLength(1);
  });

  it('an answer cut before any complete line stays an error, still after one request', async () => {
    const { send, sent } = sender(async () => {
      throw cutError('## TASK STA');
    });
    await expect(answer(send)).rejects.toMatchObject({ code: 'LLM_OUTPUT_TRUNCATED' });
    expect(sent).toHaveLength(1);
  });
});
