import type { InProcessStack as EvalStack } from '../harness/index.js';
import type { Block, NormalizedMessage, Role } from '../src/compaction/types.js';

/** The HTTP calls the eval makes, through `app.inject` (the same routes a platform uses). */

const ACTIVE_STATUSES = new Set(['queued', 'planning', 'summarizing', 'resummarizing', 'committing']);
const APPEND_BATCH = 200;

export interface ActiveMessage {
  seq: number;
  role: Role;
  kind: string;
  content: Block[];
  tokens: number;
}

export interface JobView {
  id: string;
  status: string;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  progress: { chunksDone: number; chunksTotal: number };
}

export async function call(stack: EvalStack, method: 'GET' | 'POST', url: string, payload?: unknown): Promise<unknown> {
  const res = await stack.app.inject({
    method,
    url,
    headers: stack.auth(),
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
  return res.json();
}

/** Creates a conversation (auto-compaction off: the eval decides when) and appends the messages in batches. */
export async function seed(
  stack: EvalStack,
  id: string,
  messages: readonly NormalizedMessage[],
  conversation: { contextLimit: number; policy?: Record<string, unknown> },
): Promise<{ activeTokens: number; seqs: number[] }> {
  await call(stack, 'POST', '/v1/conversations', {
    id,
    contextLimit: conversation.contextLimit,
    policy: { auto: false, ...conversation.policy },
  });
  const seqs: number[] = [];
  for (let i = 0; i < messages.length; i += APPEND_BATCH) {
    const appended = (await call(stack, 'POST', `/v1/conversations/${id}/messages`, { messages: messages.slice(i, i + APPEND_BATCH) })) as {
      messages: Array<{ seq: number }>;
    };
    seqs.push(...appended.messages.map((m) => m.seq));
  }
  const view = (await call(stack, 'GET', `/v1/conversations/${id}`)) as { activeTokens: number };
  return { activeTokens: view.activeTokens, seqs };
}

/** Long-polls a job until it is terminal. */
export async function waitForJob(stack: EvalStack, jobId: string, timeoutMs: number): Promise<JobView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = (await call(stack, 'GET', `/v1/jobs/${jobId}?wait=20`)) as JobView;
    if (!ACTIVE_STATUSES.has(view.status)) return view;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${view.status} after ${timeoutMs} ms`);
  }
}

/** Enqueues a compaction and long-polls its job until it is terminal. */
export async function compactAndWait(stack: EvalStack, id: string, options: Record<string, unknown>, timeoutMs: number): Promise<JobView> {
  const job = (await call(stack, 'POST', `/v1/conversations/${id}/compactions`, options)) as JobView;
  return waitForJob(stack, job.id, timeoutMs);
}

/** The whole active history, in seq order. */
export async function activeMessages(stack: EvalStack, id: string): Promise<ActiveMessage[]> {
  const out: ActiveMessage[] = [];
  let after: number | null = 0;
  while (after !== null) {
    const page = (await call(stack, 'GET', `/v1/conversations/${id}/messages?after=${after}&limit=1000`)) as {
      messages: ActiveMessage[];
      nextAfter: number | null;
    };
    out.push(...page.messages);
    after = page.nextAfter;
  }
  return out;
}

/** Summaries of every level-0 batch (one per summarized chunk, before any re-summary), oldest first. */
export async function chunkSummaries(stack: EvalStack, id: string): Promise<string[]> {
  const out: string[] = [];
  let after: string | null = null;
  do {
    const query: string = `level=0&limit=200${after ? `&after=${after}` : ''}`;
    const page = (await call(stack, 'GET', `/v1/conversations/${id}/batches?${query}`)) as {
      batches: Array<{ summary: string }>;
      nextAfter: string | null;
    };
    out.push(...page.batches.map((b) => b.summary));
    after = page.nextAfter;
  } while (after !== null);
  return out;
}
