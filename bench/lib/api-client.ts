import { randomUUID } from 'node:crypto';

/** The bench talks to the `compactd api` child over HTTP, like a platform would. */

export interface JobView {
  id: string;
  status: string;
  progress: { chunksDone: number; chunksTotal: number };
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
}

/**
 * fetch, retried (up to `attempts` in all) when the connection itself fails (a pooled keep-alive socket the server
 * closed, a reset under load): the request never reached the handler or its answer was lost.
 * The cause is kept in the error, since "fetch failed" alone names nothing.
 */
async function fetchRetrying(url: string, init: RequestInit, attempts = 3): Promise<Response> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fetch(url, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const detail = `${init.method} ${new URL(url).pathname}: ${(error as Error).message} (${cause?.code ?? cause?.message ?? 'no cause'})`;
      if (attempt >= attempts) throw new Error(`${detail}, after ${attempt} attempts`, { cause: error });
      process.stderr.write(`[bench] connection failed, retrying: ${detail}\n`);
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

const TERMINAL = new Set(['completed', 'noop', 'failed', 'cancelled']);

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  /**
   * One request. `retry`: a POST sent with an Idempotency-Key and retried when its connection
   * fails, since the key makes a repeat harmless; appends are not (the key costs a stored
   * response per request, which the ingest figures must not include), and GETs always are.
   */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    expect: number[] = [200, 201, 202],
    retry = method === 'GET',
  ): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(retry && method === 'POST' ? { 'idempotency-key': randomUUID() } : {}),
    };
    const init = { method, headers, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) };
    const res = await fetchRetrying(`${this.baseUrl}${path}`, init, retry ? 3 : 1);
    const text = await res.text();
    if (!expect.includes(res.status)) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
    return {
      status: res.status,
      body: (text.length > 0 && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T,
    };
  }

  async createConversation(id: string, extra: Record<string, unknown> = {}): Promise<void> {
    await this.request('POST', '/v1/conversations', { id, ...extra }, [201], true);
  }

  /** Appends in batches of `batchSize` (500: the bench's ingest unit); returns per-batch latencies (ms). */
  async append(id: string, messages: readonly unknown[], batchSize = 500): Promise<number[]> {
    const latencies: number[] = [];
    for (let i = 0; i < messages.length; i += batchSize) {
      const started = performance.now();
      await this.appendBody(id, JSON.stringify({ messages: messages.slice(i, i + batchSize) }));
      latencies.push(performance.now() - started);
    }
    return latencies;
  }

  /** One append request with a pre-serialized body (so ingest timing excludes client-side JSON work). */
  async appendBody(id: string, body: string): Promise<void> {
    await this.request('POST', `/v1/conversations/${encodeURIComponent(id)}/messages`, body, [201]);
  }

  async compact(id: string, options: Record<string, unknown> = {}): Promise<JobView> {
    return (await this.request<JobView>('POST', `/v1/conversations/${encodeURIComponent(id)}/compactions`, options, [200, 202], true)).body;
  }

  /** Long-polls until the job is terminal. */
  async waitForJob(jobId: string, timeoutMs = 600_000): Promise<JobView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await this.request<JobView>('GET', `/v1/jobs/${jobId}?wait=30`);
      if (TERMINAL.has(body.status)) return body;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${body.status} after ${timeoutMs} ms`);
    }
  }

  /** Full history (active + archived) in seq order, from the JSONL export. */
  async exportHistory(id: string): Promise<Array<{ seq: number; role: string; kind: string; content: unknown[]; archived: boolean }>> {
    const res = await fetch(`${this.baseUrl}/v1/conversations/${encodeURIComponent(id)}/export`, {
      headers: { authorization: `Bearer ${this.key}` },
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`export ${id} → ${res.status}: ${text.slice(0, 300)}`);
    return text
      .split('\n')
      .filter((line) => line.trim().length > 0)
      .map((line) => JSON.parse(line) as { seq: number; role: string; kind: string; content: unknown[]; archived: boolean });
  }
}
