import type { AddressInfo } from 'node:net';

import { startTestLlmSim, type TestLlmSim } from '../../harness/llm-sim.js';
import { loadRealTranscript } from '../../harness/transcripts.js';
import type { NormalizedMessage } from '../../src/compaction/types.js';
import { createApiKey } from '../../src/db/repos/api-keys.js';
import { compact, seedConversation, waitForJob } from './conversation.js';
import { createStack, type Stack } from './stack.js';

/** What a hostile transcript could hold: it must render as text and run nothing. */
export const HOSTILE_TEXTS = [
  '<script>window.__inspectorPwned = "script"</script>',
  '<img src=x onerror="window.__inspectorPwned = \'img\'">',
] as const;

export const CONVERSATION_ID = 'inspected-session';
export const ADMIN_TOKEN = 'inspector-admin-token-for-tests';

export interface InspectorScenario {
  stack: Stack;
  sim: TestLlmSim;
  /** http://127.0.0.1:PORT of the listening API */
  baseUrl: string;
  /** a second tenant's key and its conversation id */
  otherKey: string;
  otherConversationId: string;
  jobId: string;
  close(): Promise<void>;
}

const hostile = (text: string): NormalizedMessage => ({ role: 'user', content: [{ type: 'text', text }] });

/**
 * The API and workers over real Postgres and Redis, summarizing through llm-sim (every call
 * takes 400 ms, so the chunks of one compaction visibly run side by side), listening on a
 * port for a browser; a real Claude Code session with hostile messages at both ends, one
 * compaction of it, and a second tenant with a conversation of its own.
 */
export async function startInspectorScenario(): Promise<InspectorScenario> {
  const sim = await startTestLlmSim({ profile: 'fixed:400' });
  const stack = await createStack({
    env: {
      ANTHROPIC_BASE_URL: sim.url,
      COMPACTD_SUMMARIZER: 'anthropic:claude-haiku-4-5',
      COMPACTD_ADMIN_TOKEN: ADMIN_TOKEN,
      COMPACTD_LLM_CONCURRENCY: '8',
    },
  });
  try {
    const session = loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages;
    const messages = [hostile(HOSTILE_TEXTS[0]), ...session, hostile(HOSTILE_TEXTS[1]), hostile(HOSTILE_TEXTS[0])];
    await seedConversation(stack, CONVERSATION_ID, messages, { policy: { auto: false } });
    const queued = await compact(stack, CONVERSATION_ID, { strategy: 'summarize', keepRecent: 4 });
    const job = await waitForJob(stack, queued.id);
    if (job.status !== 'completed') throw new Error(`the compaction ended ${job.status}: ${JSON.stringify(job.error)}`);
    // the consolidation it may have caused settles first, so the pages show a tree that no longer moves
    if (typeof job.result?.consolidationJobId === 'string') await waitForJob(stack, job.result.consolidationJobId);

    const { key: otherKey } = await createApiKey(stack.db.db, { tenantName: 'other-tenant' });
    const otherConversationId = 'other-tenants-conversation';
    const created = await stack.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: { authorization: `Bearer ${otherKey}` },
      payload: { id: otherConversationId },
    });
    if (created.statusCode !== 201) throw new Error(created.body);

    await stack.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = stack.app.server.address() as AddressInfo;
    return {
      stack,
      sim,
      baseUrl: `http://127.0.0.1:${port}`,
      otherKey,
      otherConversationId,
      jobId: job.id,
      close: async () => {
        await stack.close();
        await sim.close();
      },
    };
  } catch (error) {
    await stack.close();
    await sim.close();
    throw error;
  }
}
