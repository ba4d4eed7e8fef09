import { CompactdError } from './errors.js';
import { requestEmpty, requestJson, send, type FetchLike, type HttpSettings, type RequestSpec } from './http.js';
import { readJsonLines } from './jsonl.js';
import type {
  AnthropicContext,
  AnthropicTool,
  AppendRequest,
  AppendResult,
  Batch,
  BatchMessagesPage,
  BatchPage,
  CompactionRequest,
  Conversation,
  CreateConversationRequest,
  ExportLine,
  Health,
  InputMessage,
  Job,
  JobPage,
  MessagePage,
  OpenAIContext,
  OpenAITool,
  SearchResult,
  StoredMessage,
  ToolName,
  Webhook,
  WebhookDeliveryPage,
  WebhookDeliveryQuery,
  WebhookRequest,
} from './types.js';
import { waitForTerminalJob, type WaitForJobOptions } from './wait.js';

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:8080` */
  baseUrl: string;
  /** sent as `Authorization: Bearer <apiKey>` */
  apiKey?: string | undefined;
  /** default: the global fetch */
  fetch?: FetchLike | undefined;
  /** extra attempts on 429/503 (and connection failures of idempotent requests); default 3 */
  retries?: number | undefined;
  /** per-request time limit, long polls get their wait on top; default 60 s */
  timeoutMs?: number | undefined;
  /** a `retry-after` above this is not waited out; default 30 s */
  maxRetryDelayMs?: number | undefined;
  /** extra headers on every request */
  headers?: Record<string, string> | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
}

/** POSTs: a key is generated per call when none is given, so retries never store anything twice. */
export interface PostOptions extends RequestOptions {
  idempotencyKey?: string | undefined;
}

const enc = encodeURIComponent;

/** A compactd client: one method per route of the HTTP API (SPEC §6). */
export function createClient(options: ClientOptions) {
  const http: HttpSettings = {
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    retries: options.retries ?? 3,
    timeoutMs: options.timeoutMs ?? 60_000,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    headers: options.headers ?? {},
  };
  const get = async <T>(path: string, query?: RequestSpec['query'], extra: Partial<RequestSpec> = {}): Promise<T> =>
    (await requestJson<T>(http, { method: 'GET', path, query, idempotent: true, ...extra })).body;
  const post = async <T>(path: string, body: unknown, opts: PostOptions = {}) => {
    const idempotencyKey = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
    return requestJson<T>(http, { method: 'POST', path, body, headers: { 'idempotency-key': idempotencyKey }, signal: opts.signal, idempotent: true });
  };

  // PUT replaces and DELETE removes: repeating either changes nothing more, so both may retry.
  const put = async <T>(path: string, body: unknown, opts: RequestOptions) =>
    (await requestJson<T>(http, { method: 'PUT', path, body, signal: opts.signal, idempotent: true })).body;
  const remove = (path: string, opts: RequestOptions) => requestEmpty(http, { method: 'DELETE', path, signal: opts.signal, idempotent: true });

  const client = {
    /** `GET /healthz`: the process is up. */
    health: (opts: RequestOptions = {}) => get<Health>('/healthz', undefined, { signal: opts.signal }),
    /** `GET /readyz`: Postgres and Redis reachable; a 503 is returned as `{status: 'unavailable', checks}`, not thrown. */
    ready: (opts: RequestOptions = {}) => get<Health>('/readyz', undefined, { signal: opts.signal, acceptStatuses: [503] }),

    /** `POST /v1/conversations` → 201; an existing id is a `CONVERSATION_EXISTS` (409) error. */
    createConversation: async (body: CreateConversationRequest = {}, opts: PostOptions = {}) =>
      (await post<Conversation>('/v1/conversations', body, opts)).body,
    getConversation: (id: string, opts: RequestOptions = {}) => get<Conversation>(`/v1/conversations/${enc(id)}`, undefined, opts),

    /** `POST /v1/conversations/:id/messages`: 1..1000 messages; a bare array is Anthropic format. */
    appendMessages: async (id: string, body: AppendRequest | readonly InputMessage[], opts: PostOptions = {}) => {
      const payload = Array.isArray(body) ? { messages: body } : body;
      return (await post<AppendResult>(`/v1/conversations/${enc(id)}/messages`, payload, opts)).body;
    },
    /** One page of the active history (`nextAfter` is the cursor of the next page, null at the end). */
    listMessages: (id: string, query: { after?: number; limit?: number } = {}, opts: RequestOptions = {}) =>
      get<MessagePage>(`/v1/conversations/${enc(id)}/messages`, query, opts),
    /** Every active message, page after page. */
    iterateMessages: async function* (id: string, query: { pageSize?: number } = {}, opts: RequestOptions = {}): AsyncGenerator<StoredMessage> {
      let after: number | null = 0;
      while (after !== null) {
        const page: MessagePage = await client.listMessages(id, { after, limit: query.pageSize ?? 500 }, opts);
        yield* page.messages;
        after = page.nextAfter;
      }
    },
    /** `GET /v1/conversations/:id/context`: the ready-to-send body for the next model call. */
    getContext: getContext,

    /** `POST /v1/conversations/:id/compactions`: a new job (202) or the active one (200, `deduplicated: true`). */
    compact: async (id: string, body: CompactionRequest = {}, opts: PostOptions = {}) =>
      (await post<Job>(`/v1/conversations/${enc(id)}/compactions`, body, opts)).body,
    /** `GET /v1/jobs/:id`; `waitSeconds` long-polls up to that long for a terminal status. */
    getJob: (id: string, opts: RequestOptions & { waitSeconds?: number | undefined } = {}) =>
      get<Job>(`/v1/jobs/${enc(id)}`, { wait: opts.waitSeconds || undefined }, { signal: opts.signal, extraTimeoutMs: (opts.waitSeconds ?? 0) * 1000 }),
    /** Long-polls until the job is completed, noop, failed or cancelled. */
    waitForJob: (id: string, opts: WaitForJobOptions = {}) => waitForTerminalJob((jobId, o) => client.getJob(jobId, o), id, opts),
    /** `DELETE /v1/jobs/:id`: cancels a job that has not started committing (`JOB_NOT_CANCELLABLE`, 409, after). */
    cancelJob: async (id: string, opts: RequestOptions = {}) =>
      (await requestJson<Job>(http, { method: 'DELETE', path: `/v1/jobs/${enc(id)}`, signal: opts.signal, idempotent: false })).body,
    /** `POST /v1/jobs/:id/revert`: restores the originals of the conversation's latest compaction (409 otherwise). */
    revertJob: async (id: string, opts: PostOptions = {}) => (await post<Job>(`/v1/jobs/${enc(id)}/revert`, {}, opts)).body,
    /** `GET /v1/conversations/:id/jobs`: job history, newest first. */
    listJobs: (conversationId: string, query: { limit?: number; before?: string } = {}, opts: RequestOptions = {}) =>
      get<JobPage>(`/v1/conversations/${enc(conversationId)}/jobs`, query, opts),

    /** `GET /v1/conversations/:id/batches`: archived batch summaries, oldest first. */
    listBatches: (conversationId: string, query: { level?: number; live?: boolean; after?: string; limit?: number } = {}, opts: RequestOptions = {}) =>
      get<BatchPage>(`/v1/conversations/${enc(conversationId)}/batches`, query, opts),
    getBatch: (id: string, opts: RequestOptions = {}) => get<Batch>(`/v1/batches/${enc(id)}`, undefined, opts),
    /** `GET /v1/batches/:id/messages`: the originals a batch covers, in seq order. */
    getBatchMessages: (id: string, query: { after?: number; limit?: number } = {}, opts: RequestOptions = {}) =>
      get<BatchMessagesPage>(`/v1/batches/${enc(id)}/messages`, query, opts),
    /** `GET /v1/conversations/:id/export`: the full history, one line per message, streamed. */
    exportConversation: async function* (id: string, query: { clipArchive?: boolean } = {}, opts: RequestOptions = {}): AsyncGenerator<ExportLine> {
      const attempt = await send(http, { method: 'GET', path: `/v1/conversations/${enc(id)}/export`, query, signal: opts.signal, idempotent: true });
      // The clock bounds the wait for headers; a long export may then take as long as it needs.
      attempt.stopClock();
      try {
        const body = attempt.response.body;
        if (body === null) throw new CompactdError({ status: attempt.response.status, code: 'INVALID_RESPONSE', title: 'Invalid response', detail: 'export answered without a body' });
        yield* readJsonLines<ExportLine>(body);
      } finally {
        attempt.settle();
      }
    },
    /** `GET /v1/conversations/:id/archive/search?q=`: full-text search over archived originals. */
    searchArchive: (conversationId: string, q: string, query: { limit?: number } = {}, opts: RequestOptions = {}) =>
      get<SearchResult>(`/v1/conversations/${enc(conversationId)}/archive/search`, { q, ...query }, opts),
    /** `GET /v1/tools/:name`: an agent tool definition (`compact`, `recall`) in a provider's format. */
    getTool: getTool,

    /** `PUT /v1/webhook`: the tenant webhook; a new one without `secret` gets one, returned only here. */
    setWebhook: (body: WebhookRequest, opts: RequestOptions = {}) => put<Webhook>('/v1/webhook', body, opts),
    getWebhook: (opts: RequestOptions = {}) => get<Webhook>('/v1/webhook', undefined, opts),
    deleteWebhook: (opts: RequestOptions = {}) => remove('/v1/webhook', opts),
    /** `PUT /v1/conversations/:id/webhook`: the conversation's own webhook, which wins over the tenant's. */
    setConversationWebhook: (conversationId: string, body: WebhookRequest, opts: RequestOptions = {}) =>
      put<Webhook>(`/v1/conversations/${enc(conversationId)}/webhook`, body, opts),
    getConversationWebhook: (conversationId: string, opts: RequestOptions = {}) => get<Webhook>(`/v1/conversations/${enc(conversationId)}/webhook`, undefined, opts),
    deleteConversationWebhook: (conversationId: string, opts: RequestOptions = {}) => remove(`/v1/conversations/${enc(conversationId)}/webhook`, opts),
    /** `GET /v1/webhooks/deliveries`: the delivery log, newest first, with every attempt. */
    listWebhookDeliveries: (query: WebhookDeliveryQuery = {}, opts: RequestOptions = {}) => get<WebhookDeliveryPage>('/v1/webhooks/deliveries', query, opts),
  };

  function getContext(id: string, query?: { format?: 'anthropic' }, opts?: RequestOptions): Promise<AnthropicContext>;
  function getContext(id: string, query: { format: 'openai' }, opts?: RequestOptions): Promise<OpenAIContext>;
  function getContext(id: string, query: { format?: 'anthropic' | 'openai' } = {}, opts: RequestOptions = {}) {
    return get<AnthropicContext | OpenAIContext>(`/v1/conversations/${enc(id)}/context`, { format: query.format }, opts);
  }

  function getTool(name: ToolName, format?: 'anthropic', opts?: RequestOptions): Promise<AnthropicTool>;
  function getTool(name: ToolName, format: 'openai', opts?: RequestOptions): Promise<OpenAITool>;
  function getTool(name: ToolName, format: 'anthropic' | 'openai' = 'anthropic', opts: RequestOptions = {}) {
    return get<AnthropicTool | OpenAITool>(`/v1/tools/${enc(name)}`, { format }, opts);
  }

  return client;
}

export type CompactdClient = ReturnType<typeof createClient>;
