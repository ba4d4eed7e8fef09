import { summarizeLocally } from '../compaction/local/index.js';
import type { CountTokens, SummarizeRequest } from '../compaction/types.js';
import { LOCAL_MODEL } from './model-data.js';
import { assertUsableOutput } from './output-check.js';
import type { Summarizer } from './port.js';
import { throwIfAborted } from './retry.js';

/**
 * The local summarizer behind the port (SPEC §7): deterministic, offline, extractive. It
 * costs nothing and never rate-limits, so it needs neither the retry layer nor the limiter;
 * its usage is counted with the same tokenizer as ingest.
 */

export interface LocalSummarizerAdapterOptions {
  countTokens: CountTokens;
}

function inputText(request: SummarizeRequest): string {
  return [request.system, ...request.messages.map((m) => m.content)].join('\n\n');
}

export function createLocalSummarizer(options: LocalSummarizerAdapterOptions): Summarizer {
  const { countTokens } = options;
  return {
    provider: 'local',
    async summarize(request, { signal }) {
      throwIfAborted(signal);
      const startedAt = performance.now();
      const text = summarizeLocally(request, { countTokens, maxTokens: request.maxOutputTokens });
      throwIfAborted(signal);
      assertUsableOutput({ provider: 'local', text, stopReason: 'end', refused: false });
      return {
        text,
        stopReason: 'end',
        model: LOCAL_MODEL,
        usage: { inputTokens: countTokens(inputText(request)), outputTokens: countTokens(text), cacheReadTokens: 0, cacheWriteTokens: 0 },
        latencyMs: performance.now() - startedAt,
      };
    },
  };
}
