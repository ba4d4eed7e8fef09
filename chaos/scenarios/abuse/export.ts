import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { loadConfig } from '../../../src/config/env.js';
import { maxSizeMessage } from '../../lib/abuse-texts.js';
import { apiCalls, fetchHttp } from '../../lib/http.js';
import { residentOf, watchMemory } from '../../lib/proc-memory.js';
import { round } from '../../lib/result.js';
import { startChaosStack } from '../../lib/stack.js';
import { type AbuseContext, expectNoCrash, pause, stackOptions, TARGETS } from './common.js';

/**
 * Export of a conversation too big to be one string in the API process: either more than
 * V8's longest string (2^29 − 24 characters) or, in the quick variant, more than the heap of
 * an API process started with a small `--max-old-space-size`. The export must stream every
 * line, with the API's memory flat. The client reads the stream line by line (never whole).
 */

export interface ExportOptions {
  /** messages of the maximum size in the conversation */
  messages: number;
  /** `--max-old-space-size` of the exporting API process (MB); null: Node's default */
  heapMb: number | null;
  timeoutMs: number;
}

interface StreamedExport {
  status: number | string;
  lines: number;
  unparsable: number;
  /** lines whose seq did not follow the previous one's */
  outOfOrder: number;
  bytes: number;
  /** why the stream ended early, when it did */
  cut: string | null;
}

/** Reads the NDJSON as it arrives, parsing each line and dropping it. */
async function streamExport(url: string, key: string, timeoutMs: number): Promise<StreamedExport> {
  const out: StreamedExport = { status: 'no answer', lines: 0, unparsable: 0, outOfOrder: 0, bytes: 0, cut: null };
  let lastSeq = Number.NEGATIVE_INFINITY;
  const line = (text: string) => {
    if (text === '') return;
    out.lines += 1;
    try {
      const seq = (JSON.parse(text) as { seq: number }).seq;
      if (!(seq > lastSeq)) out.outOfOrder += 1;
      lastSeq = seq;
    } catch {
      out.unparsable += 1;
    }
  };
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(timeoutMs) });
    out.status = res.status;
    if (!res.body) return out;
    const decoder = new TextDecoder();
    let partial: string[] = [];
    for await (const chunk of res.body) {
      out.bytes += chunk.byteLength;
      const text = decoder.decode(chunk, { stream: true });
      let from = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
        partial.push(text.slice(from, nl));
        line(partial.join(''));
        partial = [];
        from = nl + 1;
      }
      if (from < text.length) partial.push(text.slice(from));
    }
    line(partial.join(''));
  } catch (error) {
    out.cut = (error as Error).name === 'TimeoutError' ? `not done within ${timeoutMs / 1000} s` : (error as Error).message;
  }
  return out;
}

/**
 * As many maximum-size messages per request as the body limit takes, two requests at a time
 * (one parses and counts while Postgres stores the other's). Order does not matter here: the
 * export is checked for seq order, whatever the order the messages were appended in.
 */
async function seedBigConversation(
  baseUrl: string,
  key: string,
  id: string,
  count: number,
  maxMessageBytes: number,
  maxBodyBytes: number,
): Promise<number> {
  const calls = apiCalls(fetchHttp(baseUrl, key, 300_000));
  await calls.createConversation(id, { policy: { auto: false } });
  const perRequest = Math.max(1, Math.floor(maxBodyBytes / maxMessageBytes) - 1);
  const starts = Array.from({ length: Math.ceil(count / perRequest) }, (_, k) => k * perRequest);
  let characters = 0;
  const appendFrom = async (i: number) => {
    const batch: NormalizedMessage[] = [];
    for (let j = i; j < Math.min(count, i + perRequest); j += 1) {
      const message = maxSizeMessage('prose', maxMessageBytes, j + 1, j % 2 === 0 ? 'user' : 'assistant');
      batch.push(message);
      characters += (message.content[0] as { text: string }).text.length;
    }
    await calls.append(id, batch);
  };
  const lane = async () => {
    for (let next = starts.shift(); next !== undefined; next = starts.shift()) await appendFrom(next);
  };
  await Promise.all([lane(), lane()]);
  return characters;
}

export async function runExport(ctx: AbuseContext, options: ExportOptions): Promise<void> {
  const { rec } = ctx;
  const stack = await startChaosStack(stackOptions(ctx));
  const started = Date.now();
  try {
    const { limits } = loadConfig(stack.env);
    const seeder = await stack.startApi();
    const t0 = performance.now();
    const characters = await seedBigConversation(
      seeder.url,
      stack.keys.tenant,
      'export-big',
      options.messages,
      limits.maxMessageBytes,
      limits.maxBodyBytes,
    );
    rec.figure(
      'export: conversation (messages, characters of text), seeded in (s)',
      `${options.messages}, ${characters}, ${round((performance.now() - t0) / 1000)}`,
    );
    await seeder.process.kill('SIGKILL');

    const heap =
      options.heapMb === null ? {} : { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --max-old-space-size=${options.heapMb}`.trim() };
    const api = await stack.startApi(heap);
    // one small request first, so the baseline is a warmed-up process
    await fetch(`${api.url}/v1/conversations/export-big`, { headers: { authorization: `Bearer ${stack.keys.tenant}` } }).then((r) =>
      r.arrayBuffer(),
    );
    const memory = watchMemory(() => residentOf(api.process.pid));
    const t1 = performance.now();
    const result = await streamExport(`${api.url}/v1/conversations/export-big/export`, stack.keys.tenant, options.timeoutMs);
    const seconds = (performance.now() - t1) / 1000;
    const rss = memory.stop();
    // a process that died under the export is recorded once its exit is seen
    await Promise.race([api.process.exited, pause(2_000)]);

    rec.figure('export: answered', `${result.status}${result.cut ? `, cut: ${result.cut.slice(0, 120)}` : ''}`);
    rec.expect(`export: lines received (of ${options.messages})`, result.lines, '==', options.messages);
    rec.expect('export: lines that do not parse or are out of seq order', result.unparsable + result.outOfOrder, '==', 0);
    rec.figure(
      'export: bytes, time (s), MB/s',
      `${result.bytes}, ${round(seconds)}, ${round(result.bytes / 2 ** 20 / Math.max(seconds, 0.001))}`,
    );
    rec.figure('export: API RSS before / peak (MB)', `${round(rss.before.rssMb)} / ${round(rss.max.rssMb)}`);
    rec.expect('export: API RSS growth (MB)', round(rss.growth.rssMb), '<=', TARGETS.exportGrowthMb);
    expectNoCrash(rec, 'export', stack, started);
    rec.note(
      `Export: a conversation of ${options.messages} messages of the maximum size (prose, ${characters} characters in all; V8's longest string is 2^29 − 24 = 536,870,888), ` +
        `appended through one API process, then exported through another${options.heapMb === null ? '' : ` started with --max-old-space-size=${options.heapMb}`}, ` +
        `whose RSS is sampled every 100 ms from /proc. The client parses each line as it arrives (bounded at ${options.timeoutMs / 1000} s).`,
    );
  } finally {
    await stack.close();
  }
}
