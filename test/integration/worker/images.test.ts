import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { IMAGE_FORMATS, makeImage, mediaTypeOf } from '../../../harness/images.js';
import { waitFor } from '../../../harness/wait-for.js';
import { imageFacts } from '../../../src/compaction/images.js';
import type { ImageBlock, NormalizedMessage } from '../../../src/compaction/types.js';
import { DEFAULT_POLICY } from '../../../src/config/policy.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * A session with 20 screenshots (SPEC §5.6c), compacted by the real worker: the clip-archive
 * stays within its budget, names the newest images by reference, the newest one the user sent
 * stays in the context verbatim, and every archived image is found again by its reference
 * through the archive search, its bytes intact in the batch's originals.
 */

let stack: Stack;
const ID = 'twenty-images';
const images: ImageBlock[] = [];

beforeAll(async () => {
  stack = await createStack({ env: { COMPACTD_SUMMARIZER: 'local' } });
  const messages: NormalizedMessage[] = [{ role: 'system', content: [{ type: 'text', text: 'You review UI screenshots.' }] }];
  for (let i = 0; i < 20; i += 1) {
    const format = IMAGE_FORMATS[i % IMAGE_FORMATS.length]!;
    const image: ImageBlock = {
      type: 'image',
      source: { type: 'base64', media_type: mediaTypeOf(format), data: makeImage(format, 800 + i, 600, i).toString('base64') },
    };
    images.push(image);
    messages.push(
      { role: 'user', content: [{ type: 'text', text: `Screenshot ${i} of the settings page: is the save button aligned?` }, image] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: `In screenshot ${i} the save button sits ${i % 2 ? 'left' : 'right'} of the cancel button.` }],
      },
    );
  }
  // the last turns hold no image: the newest image is outside the tail and not the newest request
  messages.push(
    { role: 'user', content: [{ type: 'text', text: 'Now align the save button in all of them.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'On it: the form grid gets one column for the buttons.' }] },
  );
  await seedConversation(stack, ID, messages, { contextLimit: 200_000 });
});
afterAll(async () => {
  await stack?.close();
});

describe('a session with 20 images', () => {
  it('compacts within budget and every archived image is recallable from its reference', async () => {
    const job = await waitForJob(stack, (await compact(stack, ID, { strategy: 'summarize', keepRecent: 2 })).id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result.context.clipArchiveTokens).toBeLessThanOrEqual(DEFAULT_POLICY.clipArchiveMaxTokens);

    const context = (
      await stack.app.inject({ method: 'GET', url: `/v1/conversations/${ID}/context?format=anthropic`, headers: stack.auth() })
    ).json<{ system: string; messages: Array<{ role: string; content: Array<Record<string, unknown>> }> }>();
    const refs = images.map((image) => imageFacts(image).ref);
    // the newest image the user sent is still sent to the model as an image (keepImages 1: it is neither in the tail nor the newest request)
    const sentImages = context.messages.flatMap((m) => m.content.filter((b) => b['type'] === 'image'));
    expect(sentImages).toHaveLength(1);
    expect(imageFacts(sentImages[0] as unknown as ImageBlock).ref).toBe(refs[19]);
    // the state names the newest archived ones by reference and description
    const described = `${context.system}\n${JSON.stringify(context.messages)}`;
    expect(described).toContain(`${refs[18]}: image/`);
    expect(described).toMatch(/817×600/);

    // the recall index is written right after the commit (worker/recall-indexing.ts)
    await waitFor(async () => {
      const [row] = await stack.deps.db.execute<{ unindexed: string }>(sql`
        select count(*) as unindexed from archived_messages a join conversations c on c.id = a.conversation_id
         where c.external_id = ${ID} and a.reason = 'summarized'
           and not exists (select 1 from archived_recall_indexed i where i.archive_id = a.archive_id)`);
      return Number(row?.unindexed) === 0;
    }, 10_000);
    for (const [i, ref] of refs.slice(0, 19).entries()) {
      const found = await stack.app.inject({
        method: 'GET',
        url: `/v1/conversations/${ID}/archive/search?q=${encodeURIComponent(ref)}`,
        headers: stack.auth(),
      });
      expect(found.statusCode, found.body).toBe(200);
      const hits = found.json<{ hits: Array<{ seq: number; batchId: string }> }>().hits;
      expect(hits, `image ${i} (${ref})`).toHaveLength(1);
      const originals = await stack.app.inject({
        method: 'GET',
        url: `/v1/batches/${hits[0]!.batchId}/messages`,
        headers: stack.auth(),
      });
      const original = originals
        .json<{ messages: Array<{ seq: number; content: Array<Record<string, unknown>> }> }>()
        .messages.find((m) => m.seq === hits[0]!.seq);
      const block = original?.content.find((b) => b['type'] === 'image') as unknown as ImageBlock | undefined;
      expect(block?.source['data'], `image ${i}`).toBe(images[i]!.source['data']);
    }
  });
});
