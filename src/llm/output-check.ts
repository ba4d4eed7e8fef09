import { type InvalidSummaryReason, validateSummaryOutput } from '../compaction/summarize/index.js';
import { type CutAnswer, LlmError, type ProviderName, type StopReason } from './port.js';

/**
 * "A failed summary never replaces history" (SPEC §5.6a): adapters reject an empty answer,
 * a refusal, an error text or an answer cut by the output budget as `invalid_output`.
 * What counts as invalid is the core's rule (validateSummaryOutput); this file only adds
 * the providers' own refusal flags and decides which failures deserve another attempt.
 * A truncated answer's error carries its text and usage: the worker keeps a cut answer that
 * still holds its sections (compaction/summarize/cut-answer.ts) and counts what it cost either way.
 */

export interface CandidateOutput {
  provider: ProviderName;
  text: string;
  stopReason: StopReason;
  /** the provider flagged a refusal (stop_reason refusal, finish_reason content_filter, message.refusal) */
  refused: boolean;
  /** what the call cost and took: carried by a truncation error so the caller can keep and count the cut answer */
  usage?: CutAnswer['usage'];
  latencyMs?: number;
}

const FAILURES: Record<InvalidSummaryReason | 'flagged_refusal', { code: string; retryable: boolean; what: string }> = {
  // Transient glitches: a second attempt usually answers properly.
  empty: { code: 'LLM_EMPTY_OUTPUT', retryable: true, what: 'an empty answer' },
  error_text: { code: 'LLM_ERROR_TEXT', retryable: true, what: 'an error text instead of a summary' },
  too_short: { code: 'LLM_EMPTY_OUTPUT', retryable: true, what: 'an answer too short to be a summary' },
  // The same request would be cut, or declined, the same way: the caller must change it.
  truncated: { code: 'LLM_OUTPUT_TRUNCATED', retryable: false, what: 'an answer truncated at the output limit' },
  refusal: { code: 'LLM_REFUSED', retryable: false, what: 'a refusal' },
  flagged_refusal: { code: 'LLM_REFUSED', retryable: false, what: 'a refusal' },
};

/** Throws `invalid_output` when the candidate cannot be used as a summary. */
export function assertUsableOutput(candidate: CandidateOutput): void {
  const { provider } = candidate;
  let reason: InvalidSummaryReason | 'flagged_refusal' | undefined;
  if (candidate.refused) reason = 'flagged_refusal';
  else {
    const validation = validateSummaryOutput(candidate.text, candidate.stopReason === 'length' ? 'length' : null);
    if (!validation.ok) reason = validation.reason;
  }
  if (reason === undefined) return;
  const failure = FAILURES[reason];
  const excerpt = candidate.text.trim().slice(0, 120);
  throw new LlmError('invalid_output', `${provider} returned ${failure.what}${excerpt === '' ? '' : `: ${excerpt}`}`, {
    provider,
    retryable: failure.retryable,
    code: failure.code,
    ...(reason === 'truncated' && candidate.usage !== undefined
      ? { cut: { text: candidate.text, usage: candidate.usage, latencyMs: candidate.latencyMs ?? 0 } }
      : {}),
  });
}
