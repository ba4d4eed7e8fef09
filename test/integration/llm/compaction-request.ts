import { loadRealTranscript } from '../../../harness/transcripts.js';
import { blockText } from '../../../src/compaction/tokens.js';
import type { CountTokens, SummarizeMessage, SummarizeRequest } from '../../../src/compaction/types.js';

/**
 * A compaction-size summarize request built from a real Claude Code session: its messages
 * (tool calls and results as text, roles kept) until `inputTokens`, then a directive.
 */
export function realCompactionRequest(countTokens: CountTokens, inputTokens: number, maxOutputTokens: number): SummarizeRequest {
  const [conversation] = loadRealTranscript('spotter-claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl').conversations;
  if (conversation === undefined) throw new Error('the session holds no conversation');
  const messages: SummarizeMessage[] = [];
  let total = 0;
  for (const message of conversation.messages) {
    if (message.role === 'system') continue;
    const content = message.content.map(blockText).join('\n').trim();
    if (content === '') continue;
    const tokens = countTokens(content);
    // Skip outputs that would overshoot; smaller messages further on still fit.
    if (total + tokens > inputTokens) continue;
    messages.push({ role: message.role === 'assistant' ? 'assistant' : 'user', content });
    total += tokens;
  }
  messages.push({ role: 'user', content: 'Summarize the excerpt above in the seven sections, preserving exact paths and errors.' });
  return { system: 'You summarize agent conversations.', messages, maxOutputTokens };
}
