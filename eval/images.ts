import { IMAGE_FORMATS, type ImageFormat, makeImage, mediaTypeOf } from '../harness/images.js';
import type { InProcessStack as EvalStack } from '../harness/index.js';
import { waitFor } from '../harness/wait-for.js';
import { imageFacts } from '../src/compaction/images.js';
import type { ImageBlock, NormalizedMessage } from '../src/compaction/types.js';
import { DEFAULT_POLICY } from '../src/config/policy.js';
import { activeMessages, call, compactAndWait, seed } from './drive.js';

/**
 * The images check (SPEC §5.6c): a session of 20 screenshots in every format the importers
 * read (generated: the shared transcripts hold none), compacted with the default policy but a
 * two-message tail. Measured: the clip-archive against its budget, the newest image the user
 * sent still in the context as an image, the archived images the state names by reference,
 * and each archived image found by its reference through the archive search with its bytes
 * intact in the batch's originals.
 */

export interface ImagesReport {
  images: number;
  formats: readonly ImageFormat[];
  status: string;
  clipTokens: number;
  clipBudget: number;
  newestKept: boolean;
  archived: number;
  /** archived images named by reference in the context the agent gets */
  named: number;
  /** archived images a search for their reference finds */
  recallable: number;
  /** of those, the original's bytes equal to what was sent */
  intact: number;
}

const ID = 'eval-images';
const COUNT = 20;

function session(): { messages: NormalizedMessage[]; images: ImageBlock[] } {
  const images: ImageBlock[] = [];
  const messages: NormalizedMessage[] = [{ role: 'system', content: [{ type: 'text', text: 'You review UI screenshots.' }] }];
  for (let i = 0; i < COUNT; i += 1) {
    const format = IMAGE_FORMATS[i % IMAGE_FORMATS.length] as ImageFormat;
    const image: ImageBlock = {
      type: 'image',
      source: { type: 'base64', media_type: mediaTypeOf(format), data: makeImage(format, 1280 + i, 800, i).toString('base64') },
    };
    images.push(image);
    messages.push(
      { role: 'user', content: [{ type: 'text', text: `Screenshot ${i}: is the save button aligned with the form?` }, image] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: `In screenshot ${i} the save button is ${i % 3 === 0 ? 'not ' : ''}aligned.` }],
      },
    );
  }
  // the last turns hold no image: the newest image is outside the tail and not the newest request
  messages.push(
    { role: 'user', content: [{ type: 'text', text: 'Now align the save button in all of them.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'On it: the form grid gets one column for the buttons.' }] },
  );
  return { messages, images };
}

interface SearchAnswer {
  hits: Array<{ seq: number; batchId: string | null }>;
}

export async function runImagesCheck(stack: EvalStack, timeoutMs: number): Promise<ImagesReport> {
  const { messages, images } = session();
  await seed(stack, ID, messages, { contextLimit: 200_000 });
  const job = await compactAndWait(stack, ID, { strategy: 'summarize', keepRecent: 2 }, timeoutMs);
  const result = job.result ?? {};
  const clipTokens = Number((result['context'] as { clipArchiveTokens?: number } | undefined)?.clipArchiveTokens ?? 0);
  const active = await activeMessages(stack, ID);
  const refs = images.map((image) => imageFacts(image).ref);
  const sent = active.flatMap((m) => m.content.filter((b): b is ImageBlock => b.type === 'image')).map((b) => imageFacts(b).ref);
  const archived = refs.filter((ref) => !sent.includes(ref));
  const contextText = JSON.stringify(active.filter((m) => m.kind === 'clip_archive').map((m) => m.content));
  let recallable = 0;
  let intact = 0;
  for (const ref of archived) {
    let answer: SearchAnswer = { hits: [] };
    // the recall index is written right after the commit
    await waitFor(
      async () =>
        (answer = (await call(stack, 'GET', `/v1/conversations/${ID}/archive/search?q=${encodeURIComponent(ref)}`)) as SearchAnswer).hits
          .length > 0,
      10_000,
      50,
      `a hit for ${ref}`,
    ).catch(() => undefined);
    const hit = answer.hits[0];
    if (!hit?.batchId) continue;
    recallable += 1;
    const originals = (await call(stack, 'GET', `/v1/batches/${hit.batchId}/messages`)) as {
      messages: Array<{ seq: number; content: Array<{ type: string; source?: Record<string, unknown> }> }>;
    };
    const original = originals.messages.find((m) => m.seq === hit.seq)?.content.find((b) => b.type === 'image');
    if (original?.source?.['data'] === images[refs.indexOf(ref)]?.source['data']) intact += 1;
  }
  return {
    images: COUNT,
    formats: IMAGE_FORMATS,
    status: job.status,
    clipTokens,
    clipBudget: DEFAULT_POLICY.clipArchiveMaxTokens,
    newestKept: sent.includes(refs[COUNT - 1] as string),
    archived: archived.length,
    named: archived.filter((ref) => contextText.includes(ref)).length,
    recallable,
    intact,
  };
}
