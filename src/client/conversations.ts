import { enc, type PostOptions, type RequestOptions, type Transport } from './transport.js';
import type {
  AnthropicContext,
  AppendRequest,
  AppendResult,
  Conversation,
  CreateConversationRequest,
  InputMessage,
  MessagePage,
  OpenAIContext,
  StoredMessage,
  UpdateConversationRequest,
} from './types.js';

/** Conversations, messages and the ready-to-send context. */
export function conversationMethods(t: Transport) {
  function getContext(id: string, query?: { format?: 'anthropic' }, opts?: RequestOptions): Promise<AnthropicContext>;
  function getContext(id: string, query: { format: 'openai' }, opts?: RequestOptions): Promise<OpenAIContext>;
  function getContext(id: string, query: { format?: 'anthropic' | 'openai' } = {}, opts: RequestOptions = {}) {
    return t.get<AnthropicContext | OpenAIContext>(`/v1/conversations/${enc(id)}/context`, { format: query.format }, opts);
  }

  const methods = {
    /** `POST /v1/conversations` → 201; an existing id is a `CONVERSATION_EXISTS` (409) error. */
    createConversation: (body: CreateConversationRequest = {}, opts: PostOptions = {}) =>
      t.post<Conversation>('/v1/conversations', body, opts),
    getConversation: (id: string, opts: RequestOptions = {}) => t.get<Conversation>(`/v1/conversations/${enc(id)}`, undefined, opts),
    /** `PATCH /v1/conversations/:id`: model, contextLimit, policy, metadata (policy and metadata replace); validated as a whole. */
    updateConversation: (id: string, body: UpdateConversationRequest, opts: RequestOptions = {}) =>
      t.patch<Conversation>(`/v1/conversations/${enc(id)}`, body, opts),
    /**
     * `DELETE /v1/conversations/:id`: erases the conversation and everything kept for it. While a compaction is
     * active this is a `COMPACTION_ACTIVE` (409) error: cancel the job first.
     */
    deleteConversation: (id: string, opts: RequestOptions = {}) => t.remove(`/v1/conversations/${enc(id)}`, opts),
    /** `POST /v1/conversations/:id/messages`: 1..1000 messages; a bare array is Anthropic format. */
    appendMessages: (id: string, body: AppendRequest | readonly InputMessage[], opts: PostOptions = {}) =>
      t.post<AppendResult>(`/v1/conversations/${enc(id)}/messages`, Array.isArray(body) ? { messages: body } : body, opts),
    /** One page of the active history (`nextAfter` is the cursor of the next page, null at the end). */
    listMessages: (id: string, query: { after?: number; limit?: number } = {}, opts: RequestOptions = {}) =>
      t.get<MessagePage>(`/v1/conversations/${enc(id)}/messages`, query, opts),
    /** Every active message, page after page. */
    iterateMessages: async function* (
      id: string,
      query: { pageSize?: number } = {},
      opts: RequestOptions = {},
    ): AsyncGenerator<StoredMessage> {
      let after: number | null = 0;
      while (after !== null) {
        const page: MessagePage = await methods.listMessages(id, { after, limit: query.pageSize ?? 500 }, opts);
        yield* page.messages;
        after = page.nextAfter;
      }
    },
    /**
     * `PUT /v1/conversations/:id/messages/:seq/pin`: the active message is never archived and stays verbatim in the
     * context (idempotent). An archived seq is a `MESSAGE_ARCHIVED` (409) error, an unknown one `MESSAGE_NOT_FOUND` (404).
     */
    pinMessage: (id: string, seq: number, opts: RequestOptions = {}) =>
      t.put<StoredMessage>(`/v1/conversations/${enc(id)}/messages/${enc(String(seq))}/pin`, undefined, opts),
    /** `DELETE /v1/conversations/:id/messages/:seq/pin`: later compactions may archive the message again. */
    unpinMessage: (id: string, seq: number, opts: RequestOptions = {}) =>
      t.deleteJson<StoredMessage>(`/v1/conversations/${enc(id)}/messages/${enc(String(seq))}/pin`, opts),
    /** `GET /v1/conversations/:id/context`: the body for the next model call (`format: 'openai'` keeps system messages). */
    getContext,
  };
  return methods;
}
