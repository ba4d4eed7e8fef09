import { isObservation } from '../identifier-sources.js';
import type { LiveBatch } from '../plan-types.js';
import { isUserTextMessage } from '../render.js';
import { headWithin } from '../text.js';
import type { CountTokens, HistoryMessage } from '../types.js';

/**
 * The short orientation header every chunk request of a job shares (SPEC §5.4): the user's
 * latest request and the live task state, a few hundred tokens, so a chunk summarized on
 * its own still knows what matters now. Never previous summaries in full.
 */

const REQUEST_TOKENS = 160;
const TASK_STATE_TOKENS = 160;
const TASK_STATE = /^## TASK STATE[^\n]*\n([\s\S]*?)(?=\n## |$)/m;

function latestUserRequest(messages: readonly HistoryMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i] as HistoryMessage;
    if (!isUserTextMessage(message)) continue;
    const text = message.content
      .flatMap((b) => (b.type === 'text' ? [b.text] : []))
      .join('\n')
      .trim();
    if (text.length > 0 && !isObservation('user', text)) return text;
  }
  return null;
}

function liveTaskState(batches: readonly LiveBatch[]): string | null {
  // a reduce, not Math.max(...seqs): a batch may cover more seqs than a call takes arguments
  const lastSeq = (batch: LiveBatch) => batch.seqs.reduce((max, seq) => (seq > max ? seq : max), Number.NEGATIVE_INFINITY);
  const newest = batches.reduce<LiveBatch | undefined>(
    (best, batch) => (best === undefined || lastSeq(batch) > lastSeq(best) ? batch : best),
    undefined,
  );
  const section = newest ? TASK_STATE.exec(newest.summary)?.[1]?.trim() : undefined;
  return section && section.length > 0 && section !== '- none' ? section : null;
}

/** The header, or null when there is nothing to say. */
export function buildChunkHeader(
  messages: readonly HistoryMessage[],
  liveBatches: readonly LiveBatch[],
  countTokens: CountTokens,
): string | null {
  const parts: string[] = [];
  const request = latestUserRequest(messages);
  if (request) parts.push(`The user's latest request:\n${headWithin(request, REQUEST_TOKENS, countTokens)}`);
  const state = liveTaskState(liveBatches);
  if (state) parts.push(`Task state so far:\n${headWithin(state, TASK_STATE_TOKENS, countTokens)}`);
  return parts.length > 0 ? parts.join('\n\n') : null;
}
