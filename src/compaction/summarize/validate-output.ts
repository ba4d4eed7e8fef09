/**
 * A failed summary never replaces history (SPEC §5.6a). This check runs on every LLM answer
 * before it may become a batch: an empty answer, a refusal, an error text or an answer cut
 * off by the output limit is a failure to retry or fall back from, never a summary.
 */

export type InvalidSummaryReason = 'empty' | 'truncated' | 'refusal' | 'error_text' | 'too_short';

export type SummaryValidation = { ok: true } | { ok: false; reason: InvalidSummaryReason };

/** Provider stop reasons meaning the output limit cut the answer (Anthropic, OpenAI, Gemini). */
const TRUNCATION_STOPS = new Set(['max_tokens', 'length', 'MAX_TOKENS', 'model_context_window_exceeded']);

const REFUSAL =
  /^(?:i'?m sorry|i am sorry|sorry,|i apologi[sz]e|i can(?:no|')t|i cannot|i am unable|i'?m unable|i am not able|i'?m not able|i won'?t|as an ai\b|unfortunately,? i)/i;

const ERROR_TEXT = [
  /^\s*\{\s*"(?:error|type"\s*:\s*"error)/i,
  /^\s*<(?:!doctype html|html)\b/i,
  /^(?:error|exception)\s*[:\d]/i,
  /^(?:internal server error|bad gateway|service unavailable|gateway timeout)\b/i,
  /^\s*(?:rate limit(?:ed)?|overloaded|too many requests|request timed out|upstream connect error)\b/i,
  /^\s*\d{3}\s+(?:bad request|unauthorized|forbidden|not found|too many requests|internal server error|service unavailable)\b/i,
];

/** Answers shorter than this cannot hold the seven sections of a useful summary. */
const MIN_CHARS = 20;

/** Checks an LLM answer; `stopReason` is the provider's stop_reason / finish_reason, if known. */
export function validateSummaryOutput(text: string | null | undefined, stopReason: string | null | undefined): SummaryValidation {
  const trimmed = (text ?? '').trim();
  if (trimmed.length === 0) return { ok: false, reason: 'empty' };
  if (stopReason && TRUNCATION_STOPS.has(stopReason)) return { ok: false, reason: 'truncated' };
  // an answer that goes on to produce the sections is a summary, whatever its first line says
  const hasSections = /\bTASK STATE\b/i.test(trimmed);
  if (!hasSections && ERROR_TEXT.some((pattern) => pattern.test(trimmed))) return { ok: false, reason: 'error_text' };
  if (!hasSections && REFUSAL.test(trimmed)) return { ok: false, reason: 'refusal' };
  if (trimmed.length < MIN_CHARS) return { ok: false, reason: 'too_short' };
  return { ok: true };
}
