import { expect } from 'vitest';

import type { NormalizedMessage } from '../../src/compaction/types.js';
import type { Stack } from './stack.js';

/** Creates a conversation and appends `messages` through the API in batches. */
export async function seedConversation(
  stack: Stack,
  id: string,
  messages: readonly NormalizedMessage[],
  body: Record<string, unknown> = {},
) {
  const created = await stack.app.inject({ method: 'POST', url: '/v1/conversations', headers: stack.auth(), payload: { id, ...body } });
  expect(created.statusCode, created.body).toBe(201);
  for (let i = 0; i < messages.length; i += 500) {
    const res = await stack.app.inject({
      method: 'POST',
      url: `/v1/conversations/${id}/messages`,
      headers: stack.auth(),
      payload: { messages: messages.slice(i, i + 500) },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
}

export async function compact(stack: Stack, id: string, options: Record<string, unknown> = {}) {
  const res = await stack.app.inject({
    method: 'POST',
    url: `/v1/conversations/${id}/compactions`,
    headers: stack.auth(),
    payload: options,
  });
  expect([200, 202], res.body).toContain(res.statusCode);
  return res.json() as { id: string; status: string; deduplicated?: boolean };
}

/** Long-polls the job until it is terminal (or the timeout passes). */
export async function waitForJob(stack: Stack, jobId: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stack.app.inject({ method: 'GET', url: `/v1/jobs/${jobId}?wait=5`, headers: stack.auth() });
    const job = res.json();
    if (!['queued', 'planning', 'summarizing', 'resummarizing', 'committing'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status} after ${timeoutMs} ms`);
  }
}

export async function activeMessages(stack: Stack, id: string) {
  const out: Array<{ seq: number; role: string; kind: string; content: Array<Record<string, unknown>> }> = [];
  let after: number | null = 0;
  while (after !== null) {
    const res: { json(): unknown } = await stack.app.inject({
      method: 'GET',
      url: `/v1/conversations/${id}/messages?after=${after}&limit=1000`,
      headers: stack.auth(),
    });
    const page = res.json() as { messages: typeof out; nextAfter: number | null };
    out.push(...page.messages);
    after = page.nextAfter;
  }
  return out;
}

/** Asserts a context body has no orphaned tool results and every tool_use is answered (except a final pending one). */
export function expectValidToolPairing(context: { messages: Array<Record<string, unknown>> }, format: 'anthropic' | 'openai') {
  const opened = new Set<string>();
  const answered = new Set<string>();
  for (const message of context.messages) {
    if (format === 'anthropic') {
      for (const block of message['content'] as Array<Record<string, unknown>>) {
        if (block['type'] === 'tool_use') opened.add(block['id'] as string);
        if (block['type'] === 'tool_result') {
          expect(opened.has(block['tool_use_id'] as string), `orphaned tool_result ${String(block['tool_use_id'])}`).toBe(true);
          answered.add(block['tool_use_id'] as string);
        }
      }
    } else {
      for (const call of (message['tool_calls'] as Array<{ id: string }> | undefined) ?? []) opened.add(call.id);
      if (message['role'] === 'tool') {
        expect(opened.has(message['tool_call_id'] as string), `orphaned tool message ${String(message['tool_call_id'])}`).toBe(true);
        answered.add(message['tool_call_id'] as string);
      }
    }
  }
  const unanswered = [...opened].filter((id) => !answered.has(id));
  expect(unanswered.length).toBeLessThanOrEqual(1);
}
