/**
 * What the agent's context holds (SPEC §5.7, §6.1): the clip-archive message that carries the
 * summaries and the state of the work, the orientation header a chunk's summarizer gets about
 * it, and the context rendered for Anthropic, OpenAI Chat Completions and the OpenAI Responses
 * API with tool results in place.
 */

export type { ClipBatch } from './clip-archive.js';
export { buildClipArchive, clipOverhead, escapeSummary, formatSeqRanges } from './clip-archive.js';
export { buildChunkHeader } from './header.js';
export { type ContextRow, openWithCompactionBlock, renderAnthropicContextWithNative, systemWithText } from './native-context.js';
export { CONTEXT_OPENING_USER_TURN, renderAnthropicContext, renderOpenAIContext } from './render-context.js';
export {
  nativeResponsesItems,
  renderResponsesContext,
  type ResponsesContext,
  type ResponsesInputItem,
  responsesItemsOf,
} from './render-responses.js';
