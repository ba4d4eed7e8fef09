import { loadConfig } from '../../../src/config/env.js';
import { maxSizeMessage, type MaxSizeShape, messageBytes, NEEDLE, smallTurn } from '../../lib/abuse-texts.js';
import { apiCalls, fetchHttp } from '../../lib/http.js';
import { collectFailedJobs } from '../../lib/job-errors.js';
import { postgresResident, watchMemory } from '../../lib/proc-memory.js';
import { round } from '../../lib/result.js';
import { simEnv } from '../../lib/sims.js';
import { type ChaosStack, startChaosStack } from '../../lib/stack.js';
import { type AbuseContext, expectNoCrash, requestCompaction, stackOptions, TARGETS, waitForJob } from './common.js';

/**
 * A conversation holding one message at the maximum message size, for each text shape: it
 * must compact (archive, index, summarize), and then concurrent archive searches for a word
 * inside it must answer quickly and small, without Postgres' memory growing with the text
 * (a snippet computed over the whole archived text costs memory in proportion to it).
 */

export interface MaxSizeOptions {
  shapes: MaxSizeShape[];
  /** concurrent searches per shape */
  searches: number;
  compactionTimeoutMs: number;
  searchTimeoutMs: number;
}

interface SearchOutcome {
  ms: number;
  status: number | string;
  bytes: number;
  hits: number;
}

async function search(baseUrl: string, key: string, conversationId: string, timeoutMs: number): Promise<SearchOutcome> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${baseUrl}/v1/conversations/${conversationId}/archive/search?q=${NEEDLE}&limit=10`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const hits = res.status === 200 ? ((JSON.parse(text) as { hits?: unknown[] }).hits?.length ?? 0) : 0;
    return { ms: performance.now() - t0, status: res.status, bytes: Buffer.byteLength(text), hits };
  } catch (error) {
    return {
      ms: performance.now() - t0,
      status: (error as Error).name === 'TimeoutError' ? 'timeout' : (error as Error).message,
      bytes: 0,
      hits: 0,
    };
  }
}

/** Appends, compacts and searches one shape's conversation; whether it compacted. */
async function oneShape(
  ctx: AbuseContext,
  stack: ChaosStack,
  baseUrl: string,
  shape: MaxSizeShape,
  maxBytes: number,
  options: MaxSizeOptions,
  onJob: (jobId: string) => void,
): Promise<boolean> {
  const { rec } = ctx;
  const label = `max-size ${shape}`;
  const id = `max-${shape}`;
  const calls = apiCalls(fetchHttp(baseUrl, stack.keys.tenant, 120_000));
  await calls.createConversation(id, { policy: { auto: false } });
  await calls.append(id, [smallTurn(0, shape), smallTurn(1, shape)]);
  const big = maxSizeMessage(shape, maxBytes);
  const t0 = performance.now();
  await calls.append(id, [big]);
  rec.figure(`${label}: message (bytes), append (ms)`, `${messageBytes(big)}, ${round(performance.now() - t0)}`);
  await calls.append(
    id,
    [2, 3, 4, 5].map((i) => smallTurn(i, shape)),
  );

  // keepRecent 2: the big message and the turns before it are archived
  const jobId = await requestCompaction(baseUrl, stack.keys.tenant, id, { strategy: 'summarize', keepRecent: 2 });
  onJob(jobId);
  const job = await waitForJob(baseUrl, stack.keys.tenant, jobId, options.compactionTimeoutMs);
  const error = job.error as { code?: string } | null;
  rec.figure(`${label}: compaction`, `${job.status}${error?.code ? ` (${error.code})` : ''} in ${round(job.seconds)} s`);

  const memory = watchMemory(() => postgresResident(stack.pg.dataDir));
  const results = await Promise.all(
    Array.from({ length: options.searches }, () => search(baseUrl, stack.keys.tenant, id, options.searchTimeoutMs)),
  );
  const pg = memory.stop();
  const found = results.filter((r) => r.status === 200 && r.hits > 0).length;
  const failed = results.filter((r) => r.status !== 200);
  rec.expect(`${label}: searches that found the message (of ${options.searches})`, found, '==', options.searches);
  rec.expect(`${label}: slowest search (ms)`, round(Math.max(0, ...results.map((r) => r.ms))), '<=', TARGETS.searchMs);
  rec.expect(`${label}: largest search answer (bytes)`, Math.max(0, ...results.map((r) => r.bytes)), '<=', TARGETS.searchBodyBytes);
  rec.expect(`${label}: Postgres memory growth during the searches, PSS (MB)`, round(pg.growth.pssMb), '<=', TARGETS.postgresGrowthMb);
  rec.figure(
    `${label}: Postgres PSS before / peak, RSS growth (MB)`,
    `${round(pg.before.pssMb)} / ${round(pg.max.pssMb)}, ${round(pg.growth.rssMb)}`,
  );
  if (failed.length > 0) rec.note(`${label}: searches that failed: ${failed.map((r) => String(r.status)).join(', ')}`);
  return job.status === 'completed';
}

export async function runMaxSize(ctx: AbuseContext, options: MaxSizeOptions): Promise<void> {
  const { rec } = ctx;
  const stack = await startChaosStack(stackOptions(ctx));
  const started = Date.now();
  const jobIds: string[] = [];
  let baseUrl = '';
  try {
    const maxBytes = loadConfig(stack.env).limits.maxMessageBytes;
    const api = await stack.startApi();
    baseUrl = api.url;
    const sim = await stack.startLlmSimProcess(['--profile', 'instant']);
    await stack.startWorker(simEnv(sim), 'worker-max-size');
    let compacted = 0;
    for (const shape of options.shapes) {
      try {
        const outcome = await oneShape(ctx, stack, api.url, shape, maxBytes, options, (jobId) => jobIds.push(jobId));
        if (outcome) compacted += 1;
      } catch (error) {
        // one shape the API refuses (or that breaks it) is a figure; the other shapes still run
        rec.note(`max-size ${shape}: stopped early: ${(error as Error).message.slice(0, 400)}`);
      }
    }
    rec.expect(`max-size: conversations compacted (of ${options.shapes.length})`, compacted, '==', options.shapes.length);
    expectNoCrash(rec, 'max-size', stack, started);
    rec.note(
      `Max-size message: one API and one worker process summarizing through \`compactd llm-sim --profile instant\`, private Postgres (default settings) and Redis. ` +
        `Per shape (${options.shapes.join(', ')}) a conversation of 2 short turns, one message of the maximum size (COMPACTD_MAX_MESSAGE_BYTES, ${maxBytes} bytes of JSON), ` +
        `4 short turns, compacted with {strategy: summarize, keepRecent: 2} (bounded at ${options.compactionTimeoutMs / 1000} s). The word "${NEEDLE}" occurs throughout ` +
        `each text; ${options.searches} archive searches for it run at once (each bounded at ${options.searchTimeoutMs / 1000} s) while the private cluster's memory is ` +
        'sampled every 100 ms from /proc (PSS summed over the postmaster and its backends: RSS would count the shared buffers once per backend).',
    );
  } finally {
    if (baseUrl) ctx.failedJobs.push(...(await collectFailedJobs(baseUrl, stack.keys.tenant, 'max-size', jobIds)));
    await stack.close();
  }
}
