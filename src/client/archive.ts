import { CompactdError } from './errors.js';
import { readJsonLines } from './jsonl.js';
import { enc, type RequestOptions, type Transport } from './transport.js';
import type { AnthropicTool, Batch, BatchMessagesPage, BatchPage, ExportLine, OpenAITool, SearchResult, ToolName } from './types.js';

/** What compaction archived (batches, originals, export, search) and the agent tools. */
export function archiveMethods(t: Transport) {
  function getTool(name: ToolName, format?: 'anthropic', opts?: RequestOptions): Promise<AnthropicTool>;
  function getTool(name: ToolName, format: 'openai', opts?: RequestOptions): Promise<OpenAITool>;
  function getTool(name: ToolName, format: 'anthropic' | 'openai' = 'anthropic', opts: RequestOptions = {}) {
    return t.get<AnthropicTool | OpenAITool>(`/v1/tools/${enc(name)}`, { format }, opts);
  }

  return {
    /** `GET /v1/conversations/:id/batches`: archived batch summaries, oldest first. */
    listBatches: (
      conversationId: string,
      query: { level?: number; live?: boolean; after?: string; limit?: number } = {},
      opts: RequestOptions = {},
    ) => t.get<BatchPage>(`/v1/conversations/${enc(conversationId)}/batches`, query, opts),
    getBatch: (id: string, opts: RequestOptions = {}) => t.get<Batch>(`/v1/batches/${enc(id)}`, undefined, opts),
    /** `GET /v1/batches/:id/messages`: the originals a batch covers, in seq order. */
    getBatchMessages: (id: string, query: { after?: number; limit?: number } = {}, opts: RequestOptions = {}) =>
      t.get<BatchMessagesPage>(`/v1/batches/${enc(id)}/messages`, query, opts),
    /** `GET /v1/conversations/:id/export`: the full history, one line per message, streamed. */
    exportConversation: async function* (
      id: string,
      query: { clipArchive?: boolean } = {},
      opts: RequestOptions = {},
    ): AsyncGenerator<ExportLine> {
      const attempt = await t.stream(`/v1/conversations/${enc(id)}/export`, query, opts);
      // The clock bounds the wait for headers; a long export may then take as long as it needs.
      attempt.stopClock();
      try {
        const body = attempt.response.body;
        if (body === null)
          throw new CompactdError({
            status: attempt.response.status,
            code: 'INVALID_RESPONSE',
            title: 'Invalid response',
            detail: 'export answered without a body',
          });
        yield* readJsonLines<ExportLine>(body);
      } finally {
        attempt.settle();
      }
    },
    /** `GET /v1/conversations/:id/archive/search?q=`: full-text search over archived originals. */
    searchArchive: (conversationId: string, q: string, query: { limit?: number } = {}, opts: RequestOptions = {}) =>
      t.get<SearchResult>(`/v1/conversations/${enc(conversationId)}/archive/search`, { q, ...query }, opts),
    /** `GET /v1/tools/:name`: an agent tool definition (`compact`, `recall`) in a provider's format. */
    getTool,
  };
}
