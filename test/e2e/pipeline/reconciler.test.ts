import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { getConversation } from '../../../src/db/repos/conversations.js';
import { insertJob } from '../../../src/db/repos/jobs.js';
import { reconcileJobs } from '../../../src/worker/reconciler.js';
import { seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await createStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('reconciler', () => {
  it('enqueues a job that exists in Postgres but not in Redis, once', async () => {
    const messages = loadRealTranscript('spotter-claude-code/tool_heavy.jsonl').conversations[0]!.messages;
    await seedConversation(stack, 'lost', messages, { policy: { auto: false } });
    const conversation = (await getConversation(stack.db.db, (await stack.db.db.query.tenants.findFirst())!.id, 'lost'))!;
    // as if Redis had been flushed right after the job row was committed
    const job = (await insertJob(stack.db.db, {
      tenantId: conversation.tenantId,
      conversationId: conversation.id,
      trigger: 'api',
      options: { strategy: 'summarize', keepRecent: 2 },
    }))!;
    const deps = { db: stack.db.db, queues: stack.deps.queues, logger: stack.deps.logger };
    expect(await reconcileJobs(deps, 0)).toBe(1);
    const done = await waitForJob(stack, job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    expect(await reconcileJobs(deps, 0)).toBe(0);
  });
});
