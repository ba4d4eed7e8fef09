import { parseArgs } from 'node:util';

import type { CompactdClient, CompactionRequest, CompactionResult, Job } from '../../client/index.js';
import {
  type CliIo,
  connect,
  CONNECTION_OPTIONS,
  CONNECTION_USAGE,
  describeError,
  numberOption,
  processIo,
  resolveConnection,
  UsageError,
} from './common.js';
import { createProgress, formatDuration } from './progress.js';

const USAGE = `usage: compactd compact ID [options]

Enqueues a compaction of conversation ID on a running service and follows the job
(chunks summarized / total) until it ends. Exit status 0 when it completed or had
nothing to do, 1 when it failed or was cancelled.

  --strategy S          auto | summarize | mask | reset | native (default: the conversation's policy)
  --keep-recent N       recent messages kept verbatim
  --target-ratio R      compact down to R × the context limit (0 < R < 1)
  --target-tokens N     compact down to N active tokens
  --focus TEXT          what the summary must keep in detail
  --model M             summarizer: local, anthropic:MODEL, openai:MODEL, or a provider name
  --on-llm-failure F    fallback (default) | fail
  --no-wait             print the queued job and return
  --timeout SECONDS     stop following after this long (default 600)
  --json                print the final job as JSON on stdout
${CONNECTION_USAGE}
`;

const STRATEGIES = ['auto', 'summarize', 'mask', 'reset', 'native'] as const;

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** The request body from `compact`/`demo` options; unset options stay out so the policy decides. */
export function compactionRequest(values: Record<string, string | boolean | undefined>): CompactionRequest {
  const str = (name: string) => (typeof values[name] === 'string' ? values[name] : undefined);
  const request: CompactionRequest = {};
  const strategy = oneOf('strategy', str('strategy'), STRATEGIES);
  if (strategy) request.strategy = strategy;
  const keepRecent = numberOption('keep-recent', str('keep-recent'), (n) => Number.isInteger(n) && n >= 0);
  if (keepRecent !== undefined) request.keepRecent = keepRecent;
  const ratio = numberOption('target-ratio', str('target-ratio'), (n) => n > 0 && n < 1);
  const tokens = numberOption('target-tokens', str('target-tokens'), (n) => Number.isInteger(n) && n >= 0);
  if (ratio !== undefined && tokens !== undefined) throw new UsageError('give --target-ratio or --target-tokens, not both');
  if (ratio !== undefined) request.target = { ratio };
  if (tokens !== undefined) request.target = { tokens };
  if (str('focus')) request.focus = str('focus');
  if (str('model')) request.model = str('model');
  const onFailure = oneOf('on-llm-failure', str('on-llm-failure'), ['fallback', 'fail'] as const);
  if (onFailure) request.onLLMFailure = onFailure;
  return request;
}

/** Follows a job with a progress bar of its chunks until it is terminal. */
export async function followJob(client: CompactdClient, job: Job, io: CliIo, options: { timeoutMs: number; label: string }): Promise<Job> {
  const progress = createProgress({ label: options.label, unit: 'chunks', stream: io.stderr });
  progress.update(job.progress.chunksDone, job.progress.chunksTotal, job.status);
  // Short long-polls: the service answers at once when the job ends, and the bar moves every half second meanwhile.
  const done = await client.waitForJob(job.id, {
    timeoutMs: options.timeoutMs,
    pollSeconds: 0.5,
    onProgress: (j) => progress.update(j.progress.chunksDone, j.progress.chunksTotal, j.status),
  });
  progress.finish(done.status);
  return done;
}

const n = (value: number) => value.toLocaleString('en-US');

function formatLlmUsage(llm: NonNullable<CompactionResult['llm']>): string {
  const models = llm.models ?? [];
  if (llm.calls === 0 && models.every((m) => m.startsWith('local:'))) {
    return `summarizer: local (offline, no LLM calls), ${n(llm.inputTokens)} tokens read, ${n(llm.outputTokens)} written`;
  }
  const names = models.length > 0 ? ` [${models.join(', ')}]` : '';
  return `LLM: ${n(llm.calls)} call(s), ${n(llm.inputTokens)} in / ${n(llm.outputTokens)} out tokens, $${llm.costUsd.toFixed(4)}${names}`;
}

/** Human lines for a finished job: tokens, archive, LLM usage, retention, time. */
export function formatJobSummary(job: Job): string[] {
  const lines: string[] = [];
  const took = job.startedAt && job.finishedAt ? formatDuration(Date.parse(job.finishedAt) - Date.parse(job.startedAt)) : undefined;
  const waited = job.startedAt ? formatDuration(Date.parse(job.startedAt) - Date.parse(job.createdAt)) : undefined;
  lines.push(`job ${job.id}: ${job.status}${took ? ` in ${took}` : ''}${waited ? ` (queued ${waited})` : ''}`);
  if (job.status === 'noop') {
    lines.push(`nothing to compact: ${job.result.message ?? job.result.reason}`);
  } else if (job.status === 'completed') {
    const r = job.result;
    const saved = r.tokensBefore > 0 ? ((r.tokensBefore - r.tokensAfter) / r.tokensBefore) * 100 : 0;
    lines.push(`tokens: ${n(r.tokensBefore)} → ${n(r.tokensAfter)} (−${saved.toFixed(1)}%)`);
    lines.push(
      `messages archived: ${n(r.messagesArchived)} into ${r.batchIds.length} batch(es)${r.strategy ? `, strategy ${r.strategy}` : ''}`,
    );
    if (r.llm) lines.push(formatLlmUsage(r.llm));
    if (r.identifiers && r.identifiers.total > 0) lines.push(`identifiers kept: ${n(r.identifiers.found)}/${n(r.identifiers.total)}`);
    if (r.fallbacks && r.fallbacks.length > 0) {
      lines.push(
        `fallbacks: ${r.fallbacks.length} step(s) used the local summarizer (${[...new Set(r.fallbacks.map((f) => f.reason))].join(', ')})`,
      );
    }
  }
  if (job.error) lines.push(`error: ${job.error.code}: ${job.error.message}`);
  return lines;
}

/** `compactd compact ID [options]`. */
export async function runCompact(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        ...CONNECTION_OPTIONS,
        strategy: { type: 'string' },
        'keep-recent': { type: 'string' },
        'target-ratio': { type: 'string' },
        'target-tokens': { type: 'string' },
        focus: { type: 'string' },
        model: { type: 'string' },
        'on-llm-failure': { type: 'string' },
        'no-wait': { type: 'boolean' },
        timeout: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const id = positionals[0];
  if (!id || positionals.length > 1) {
    io.stderr.write(USAGE);
    return 2;
  }
  let request: CompactionRequest;
  let timeoutSeconds: number;
  try {
    request = compactionRequest(values);
    timeoutSeconds = numberOption('timeout', values.timeout, (s) => s > 0) ?? 600;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`${error.message}\n`);
    return 2;
  }
  const connection = resolveConnection(values, io.env);
  const client = connect(connection);
  try {
    const job = await client.compact(id, request);
    io.stderr.write(`${job.deduplicated ? 'a compaction is already running' : 'enqueued'}: job ${job.id} (${job.status})\n`);
    const final = values['no-wait']
      ? job
      : await followJob(client, job, io, { timeoutMs: timeoutSeconds * 1000, label: `compacting ${id}` });
    if (values.json) io.stdout.write(`${JSON.stringify(final, null, 2)}\n`);
    else io.stdout.write(`${formatJobSummary(final).join('\n')}\n`);
    return final.status === 'failed' || final.status === 'cancelled' ? 1 : 0;
  } catch (error) {
    io.stderr.write(describeError(error, connection));
    return 1;
  }
}
