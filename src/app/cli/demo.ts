import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import type { CompactdClient, CompactionRequest, Job } from '../../client/index.js';
import { ConfigError, loadConfig } from '../../config/env.js';
import { createDb } from '../../db/client.js';
import { createApiKey } from '../../db/repos/api-keys.js';
import { importTranscript } from '../../importers/index.js';
import {
  type CliIo,
  connect,
  type Connection,
  CONNECTION_OPTIONS,
  CONNECTION_USAGE,
  describeError,
  MISSING_KEY_HELP,
  numberOption,
  processIo,
  resolveConnection,
  UsageError,
} from './common.js';
import { compactionRequest, followJob, formatJobSummary } from './compact.js';
import { appendInBatches, contentHash } from './import.js';
import { createProgress, formatDuration } from './progress.js';
import { realTranscriptsDir } from './shared-data.js';

const USAGE = `usage: compactd demo [options]

Imports a real Claude Code session into a running compactd, compacts it and shows what
happened: tokens before and after, messages archived, the batches, the clip-archive text.

  --file FILE           a Claude Code session JSONL (default: a session of the shared
                        real-transcript set when present (COMPACTD_SHARED_DATA, else
                        ../shared/data beside the checkout), else the bundled sample)
  --provider P          summarize with local (default), anthropic or openai; the service
                        must have that provider configured (e.g. pointed at llm-sim)
  --model M             summarizer model, e.g. anthropic:claude-haiku-4-5
  --strategy S          auto | summarize (default) | mask | reset
  --focus TEXT          what the summary must keep in detail
  --full                print the whole clip-archive (default: its first 40 lines)
  --yes, --non-interactive   do not pause before compacting
  --timeout SECONDS     give up following the job after this long (default 600)
${CONNECTION_USAGE}

Without a key the demo creates one for tenant "demo" in the database named by
DATABASE_URL (the service's own default when unset), like \`compactd keys create\`.
`;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** A main session of the shared set (143 messages before Claude Code's own compaction). */
const PREFERRED_SESSION = '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl';
export const SAMPLE_SESSION = path.resolve(repoRoot, 'samples/claude-code-session.jsonl');
const CLIP_PREVIEW_LINES = 40;

/** The session the demo imports: `--file`, else a real one of the shared data, else the sample. */
export function demoSession(explicit: string | undefined, env: Record<string, string | undefined>): { file: string; source: string } {
  if (explicit) return { file: explicit, source: 'given' };
  const shared = path.join(realTranscriptsDir(env), 'raw/spotter-claude-code');
  if (existsSync(shared)) {
    const sessions = readdirSync(shared)
      .filter((f) => /^[0-9a-f-]{36}\.jsonl$/.test(f))
      .sort();
    const chosen = sessions.includes(PREFERRED_SESSION) ? PREFERRED_SESSION : sessions[0];
    if (chosen) return { file: path.join(shared, chosen), source: 'a real Claude Code session from the shared data' };
  }
  return { file: SAMPLE_SESSION, source: 'bundled sample session' };
}

type LocalKey = { ok: true; key: string; prefix: string; database: string } | { ok: false; reason: string };

/**
 * The newcomer path (`npm start`, then `npx compactd demo` with no key): on the service's
 * machine the demo can create a key itself, exactly as `compactd keys create --tenant demo`.
 */
async function createLocalDemoKey(env: Record<string, string | undefined>): Promise<LocalKey> {
  let databaseUrl: string;
  try {
    databaseUrl = loadConfig(env).databaseUrl;
  } catch (error) {
    return { ok: false, reason: error instanceof ConfigError ? error.message : String(error) };
  }
  const database = new URL(databaseUrl);
  const where = `${database.host}${database.pathname}`;
  const handle = createDb(databaseUrl, { max: 1, name: 'compactd-demo' });
  try {
    const created = await createApiKey(handle.db, { tenantName: 'demo', name: 'demo' });
    return { ok: true, key: created.key, prefix: created.prefix, database: where };
  } catch (error) {
    return { ok: false, reason: `${where}: ${(error as Error).message}` };
  } finally {
    await handle.close();
  }
}

function parseDemoArgs(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      file: { type: 'string' },
      provider: { type: 'string' },
      model: { type: 'string' },
      strategy: { type: 'string' },
      focus: { type: 'string' },
      full: { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      'non-interactive': { type: 'boolean' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const provider = values.provider;
  if (provider !== undefined && !['local', 'anthropic', 'openai'].includes(provider))
    throw new UsageError('--provider must be local, anthropic or openai');
  // A bare provider asks for its cheapest summarizer; a model without a provider prefix gets the one given.
  const model = values.model ? (provider && !values.model.includes(':') ? `${provider}:${values.model}` : values.model) : provider;
  const request: CompactionRequest = compactionRequest({ strategy: values.strategy ?? 'summarize', focus: values.focus, model });
  const timeoutSeconds = numberOption('timeout', values.timeout, (s) => s > 0) ?? 600;
  return { values, request, timeoutMs: timeoutSeconds * 1000 };
}

/** `compactd demo [options]`. */
export async function runDemo(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed: ReturnType<typeof parseDemoArgs>;
  try {
    parsed = parseDemoArgs(args);
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, request, timeoutMs } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const connection = resolveConnection(values, io.env);
  try {
    return await demo(connection, io, { ...values, request, timeoutMs, interactive: !values.yes && !values['non-interactive'] });
  } catch (error) {
    io.stderr.write(describeError(error, connection));
    return 1;
  }
}

interface DemoOptions {
  file?: string | undefined;
  full?: boolean | undefined;
  request: CompactionRequest;
  timeoutMs: number;
  interactive: boolean;
}

async function demo(connection: Connection, io: CliIo, options: DemoOptions): Promise<number> {
  const out = (line = '') => io.stdout.write(`${line}\n`);
  const started = Date.now();
  await connect(connection).health();
  if (connection.key === undefined) {
    const local = await createLocalDemoKey(io.env);
    if (!local.ok) {
      io.stderr.write(`no API key, and none could be created locally (${local.reason}).\n${MISSING_KEY_HELP}`);
      return 1;
    }
    io.stderr.write(
      `no API key given: created ${local.prefix}… for tenant "demo" in ${local.database} (revoke it: compactd keys revoke ${local.prefix})\n`,
    );
    connection = { ...connection, key: local.key, keySource: 'a key created for the demo' };
  }
  const client = connect(connection);

  const session = demoSession(options.file, io.env);
  const text = await readFile(session.file, 'utf8');
  const imported = importTranscript(text, { format: 'claude-code', fileName: path.basename(session.file) }).conversations[0];
  if (!imported || imported.messages.length === 0) throw new Error(`${session.file} holds no messages`);
  out(`session   ${path.basename(session.file)} (${session.source})`);
  out(`          ${imported.messages.length} messages, ${imported.stats.toolPairs} tool calls with their results`);
  const boundary = imported.metadata['compactBoundary'] as { preTokens?: number; trigger?: string } | undefined;
  if (boundary?.preTokens) {
    out(
      `          Claude Code compacted this session itself at ${boundary.preTokens.toLocaleString('en-US')} tokens (${boundary.trigger ?? 'auto'}); the demo takes the history before that point`,
    );
  }

  const id = `demo-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}-${contentHash(`${Date.now()}${Math.random()}`).slice(0, 4)}`;
  // The session's own model sets the window it ran in.
  await client.createConversation({
    id,
    model: imported.model ?? 'claude-sonnet-4-5',
    policy: { auto: false },
    metadata: { demo: true, importedFrom: path.basename(session.file) },
  });
  const appendProgress = createProgress({ label: 'appending', unit: 'messages', stream: io.stderr });
  await appendInBatches(client, id, imported.messages, {
    idempotencyPrefix: `demo-${id}`,
    onProgress: (d, t) => appendProgress.update(d, t),
  });
  appendProgress.finish(`${imported.messages.length} messages`);
  const before = await client.getConversation(id);
  out(
    `stored    conversation ${id}: ${before.messageCount} messages, ${before.activeTokens.toLocaleString('en-US')} tokens (${(before.contextUsage.ratio * 100).toFixed(1)}% of ${before.contextLimit.toLocaleString('en-US')})`,
  );

  if (options.interactive && io.confirm && !(await io.confirm('Compact it now? [Y/n] '))) return 0;
  const job = await client.compact(id, options.request);
  const done = await followJob(client, job, io, { timeoutMs: options.timeoutMs, label: 'compacting' });
  out();
  for (const line of formatJobSummary(done)) out(line);
  const follow = done.status === 'completed' ? done.result.consolidationJobId : null;
  if (follow) {
    // the compaction committed without it; the demo waits only to show the archive's final shape
    const merged = await followJob(client, await client.getJob(follow), io, { timeoutMs: options.timeoutMs, label: 'consolidating' });
    const absorbed = merged.status === 'completed' ? (merged.result.absorbedBatchIds?.length ?? 0) : 0;
    out(`consolidation ${merged.id}: ${merged.status}${absorbed > 0 ? ` (${absorbed} batches merged into one)` : ''}`);
  }
  if (done.status === 'completed') await printArchive(client, id, done, { full: options.full === true, out });
  out();
  out(`total time ${formatDuration(Date.now() - started)}`);
  out(`explore   ${connection.url}/v1/conversations/${id}/context  (also /batches, /export, /archive/search?q=…)`);
  if (connection.keySource === 'a key created for the demo') out(`          with: -H "authorization: Bearer ${connection.key}"`);
  return done.status === 'completed' || done.status === 'noop' ? 0 : 1;
}

async function printArchive(
  client: CompactdClient,
  id: string,
  job: Job & { status: 'completed' },
  options: { full: boolean; out: (line?: string) => void },
) {
  const { out } = options;
  const { batches } = await client.listBatches(id, { limit: 200 });
  out();
  out(`batches   ${batches.length}`);
  for (const b of batches) {
    const live = b.supersededBy === null ? '' : ` (absorbed by ${b.supersededBy.slice(0, 8)})`;
    out(
      `  L${b.level} ${b.id.slice(0, 8)}  seqs ${b.seqRanges}  ${b.sourceMessages} msgs  ${b.sourceTokens.toLocaleString('en-US')} → ${b.summaryTokens.toLocaleString('en-US')} tokens  ${b.model}${live}`,
    );
  }
  let clip: string | undefined;
  for await (const message of client.iterateMessages(id)) {
    if (message.kind !== 'clip_archive') continue;
    clip = message.content.map((block) => (typeof block['text'] === 'string' ? block['text'] : '')).join('\n');
    break;
  }
  if (clip === undefined) return;
  const lines = clip.split('\n');
  const shown = options.full ? lines : lines.slice(0, CLIP_PREVIEW_LINES);
  out();
  out(`clip-archive (seq ${job.result.clipArchiveSeq}, ${lines.length} lines):`);
  out('─'.repeat(72));
  for (const line of shown) out(line);
  if (shown.length < lines.length) out(`… ${lines.length - shown.length} more lines (--full shows them all)`);
  out('─'.repeat(72));
}
