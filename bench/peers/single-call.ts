import OpenAI from 'openai';
import { renderChunkMessages } from '../../src/compaction/prompt.js';
import type { HistoryMessage } from '../../src/compaction/types.js';
import { countTokens } from '../../src/lib/count-tokens.js';

/**
 * The single-call peer: what LangChain v1's `summarizationMiddleware` does when it fires —
 * render the messages to summarize into one prompt template and send ONE request to the
 * chat model (here through the OpenAI SDK, as `@langchain/openai` would, against llm-sim's
 * OpenAI-compatible endpoint). The middleware trims that history to its last
 * `trimTokensToSummarize` tokens first (4000 by default); `trimTokens: null` sends all of it.
 * The LangChain packages themselves are not dependencies of this project (see BENCH.md).
 */

export interface SingleCallResult {
  ok: boolean;
  wallMs: number;
  /** tokens of history actually sent (after trimming) / tokens of history to summarize */
  sentTokens: number;
  historyTokens: number;
  inputTokens: number;
  outputTokens: number;
  error: { status: number | null; message: string } | null;
}

const PROMPT_HEAD =
  'Condense the conversation below into a summary that lets the assistant continue the work: the goal, ' +
  'what was done, files and commands involved, errors seen, decisions taken and what comes next. ' +
  'Reply with the summary alone.\n\n<conversation>\n';
const PROMPT_TAIL = '\n</conversation>';

/** LangChain's buffer-string rendering: one "Role: text" paragraph per message. */
function bufferString(messages: readonly HistoryMessage[]): string[] {
  const label = { user: 'Human', assistant: 'AI', system: 'System' } as const;
  return renderChunkMessages(messages).map((m) => `${label[m.role]}: ${m.content}`);
}

/** Keeps the newest lines whose tokens fit `budget` (trim strategy "last"). */
function trimLast(lines: readonly string[], budget: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const tokens = countTokens(lines[i] as string);
    if (used + tokens > budget) break;
    kept.unshift(lines[i] as string);
    used += tokens;
  }
  return kept;
}

export async function singleCallSummary(options: {
  openaiBaseUrl: string;
  messages: readonly HistoryMessage[];
  maxOutputTokens: number;
  /** null: the whole history in one request; a number: the middleware's trimming */
  trimTokens: number | null;
  model?: string;
}): Promise<SingleCallResult> {
  const client = new OpenAI({ apiKey: 'not-needed', baseURL: options.openaiBaseUrl, maxRetries: 0, timeout: 600_000 });
  const lines = bufferString(options.messages);
  const historyTokens = lines.reduce((sum, line) => sum + countTokens(line), 0);
  const sent = options.trimTokens === null ? lines : trimLast(lines, options.trimTokens);
  const sentTokens = sent.reduce((sum, line) => sum + countTokens(line), 0);
  const started = performance.now();
  try {
    const completion = await client.chat.completions.create({
      model: options.model ?? 'gpt-4o-mini',
      max_tokens: options.maxOutputTokens,
      messages: [{ role: 'user', content: `${PROMPT_HEAD}${sent.join('\n\n')}${PROMPT_TAIL}` }],
    });
    return {
      ok: (completion.choices[0]?.message.content ?? '').length > 0,
      wallMs: performance.now() - started,
      sentTokens,
      historyTokens,
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
      error: null,
    };
  } catch (error) {
    const status = error instanceof OpenAI.APIError ? (error.status ?? null) : null;
    return {
      ok: false,
      wallMs: performance.now() - started,
      sentTokens,
      historyTokens,
      inputTokens: 0,
      outputTokens: 0,
      error: { status, message: error instanceof Error ? error.message.slice(0, 300) : String(error) },
    };
  }
}
