import type { Summarizers } from '../llm/create-summarizer.js';
import { costUsd } from '../llm/models.js';
import { isLlmError, type Summarizer } from '../llm/port.js';
import type { Metrics } from './metrics.js';

/**
 * Wraps a summarizer (after its retry layer) so every call is counted, timed and its usage
 * and cost added up by provider and model. Wrapping at the port keeps the adapters and the
 * worker free of metrics code, and a memoized step that never calls the LLM counts nothing.
 */
export function instrumentSummarizer(inner: Summarizer, metrics: Metrics): Summarizer {
  return {
    provider: inner.provider,
    async summarize(request, options) {
      const labels = { provider: inner.provider, model: options.model };
      const stop = metrics.llmDuration.startTimer(labels);
      try {
        const result = await inner.summarize(request, options);
        metrics.llmRequests.inc({ ...labels, outcome: 'ok' });
        const { usage } = result;
        metrics.llmTokens.inc({ ...labels, kind: 'input' }, usage.inputTokens);
        metrics.llmTokens.inc({ ...labels, kind: 'output' }, usage.outputTokens);
        metrics.llmTokens.inc({ ...labels, kind: 'cache_read' }, usage.cacheReadTokens);
        metrics.llmTokens.inc({ ...labels, kind: 'cache_write' }, usage.cacheWriteTokens);
        // The local summarizer is free; remote prices come from the model registry.
        metrics.llmCost.inc(labels, inner.provider === 'local' ? 0 : costUsd(options.model, usage));
        return result;
      } catch (error) {
        metrics.llmRequests.inc({ ...labels, outcome: isLlmError(error) ? error.code : 'ERROR' });
        throw error;
      } finally {
        stop();
      }
    },
  };
}

export function instrumentSummarizers(summarizers: Summarizers, metrics: Metrics): Summarizers {
  const out: Summarizers = { local: instrumentSummarizer(summarizers.local, metrics) };
  if (summarizers.anthropic) out.anthropic = instrumentSummarizer(summarizers.anthropic, metrics);
  if (summarizers.openai) out.openai = instrumentSummarizer(summarizers.openai, metrics);
  return out;
}
