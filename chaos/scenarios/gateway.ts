import { setMaxListeners } from 'node:events';
import type { Agent } from 'node:http';

import { sql } from 'drizzle-orm';

import { createApiKey } from '../../src/db/repos/api-keys.js';
import { setTenantQuotas } from '../../src/db/repos/tenant-quotas.js';
import { type LlmSim, startLlmSim } from '../../src/llm-sim/server.js';
import { liveTurn } from '../lib/corpus.js';
import { cpuShares, sampleCpu } from '../lib/cpu.js';
import { burstAgent, type GatewayAnswer, sendGateway, statusCounts } from '../lib/gateway-http.js';
import { INCIDENT_CONVERSATION, runIncidents } from '../lib/gateway-incidents.js';
import { inProviderShape, type MalformedCase, malformedCases } from '../lib/gateway-malformed.js';
import { apiCalls, fetchHttp } from '../lib/http.js';
import { recordCrashes } from '../lib/outcome.js';
import { countStatements, type StatementCounter, statementRate } from '../lib/pg-statements.js';
import { overlapping, type ReadSample, startReadProbe } from '../lib/read-probe.js';
import { percentile, round, ScenarioRecorder, type ScenarioResult } from '../lib/result.js';
import { type ChaosStack, startChaosStack } from '../lib/stack.js';

/**
 * Issue 32's targets for the gateway under real clients, in one run against one `compactd api`
 * process (private Postgres and Redis, llm-sim as the provider, compactions summarized by the
 * local summarizer in worker processes):
 * 1. quotas: N conversations over their window, under a tenant limited to K active compactions;
 * 2. many gateway requests waiting on their compactions while none can finish (no worker yet):
 *    the statements Postgres runs per second, and another tenant's reads, before and while they
 *    wait; then workers start and every request must be answered from a compacted context;
 * 3. headers: the cookie, proxy and forwarded-credential headers a client sends never reach
 *    the provider, and the provider's cookie and account headers never come back;
 * 4. a few hundred malformed gateway requests: no 5xx;
 * 5. incidents (an edited turn, a retry, a NUL, '' for null, a side request): the session
 *    compacts again afterwards, and the next upstream request is at most half the largest.
 * The parts share one stack (the waiters' workers serve the later parts), hence one file; the
 * clients and request corpora are in chaos/lib/gateway-*.ts.
 */

export interface GatewayOptions {
  variant: 'quick' | 'full';
  /** requests waiting on their compactions at once */
  waiters: number;
  /** each statement-rate window (idle, then while they wait) */
  windowMs: number;
  /** worker processes started once the waiters have been measured */
  workers: number;
  quota: { conversations: number; maxActive: number };
  /** malformed requests per route drawn from fields × hostile values (fixed cases come on top) */
  malformedPerRoute: number;
  /** run the incidents (each drives a session until it compacts: tens of seconds each) */
  incidents: boolean;
  logDir?: string;
}

export const GATEWAY_FULL: GatewayOptions = {
  variant: 'full',
  waiters: 1_000,
  windowMs: 10_000,
  workers: 2,
  quota: { conversations: 20, maxActive: 3 },
  malformedPerRoute: 120,
  incidents: true,
};
export const GATEWAY_QUICK: GatewayOptions = {
  variant: 'quick',
  waiters: 100,
  windowMs: 3_000,
  workers: 1,
  quota: { conversations: 20, maxActive: 3 },
  malformedPerRoute: 20,
  incidents: false,
};

/** The old gateway re-read the job every 200 ms per waiting request: 5 statements per second each. */
const POLLING_STATEMENTS_PER_WAITER = 5;
/** Statements per second the waiting requests may add, as a share of what polling would add. */
const MAX_SHARE_OF_POLLING = 0.01;
/** Another tenant's read p50 while the requests wait, at most this many times its quiet p50. */
const MAX_READ_P50_RATIO = 1.5;
/** the incidents' target: the next upstream request after the compaction, over the largest before it */
const MAX_INCIDENT_RATIO = 0.5;

const OPERATOR_KEYS = { anthropic: 'sk-ant-operator-chaos', openai: 'sk-openai-operator-chaos' };
const MODEL = 'claude-haiku-4-5';
/** the waiting requests' conversations: a window their first request is over */
const WAITER_CONVERSATION = { model: MODEL, contextLimit: 2_000, policy: { keepRecent: 2, minMessages: 2, targetRatio: 0.2 } };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** About 600 tokens of a build log, distinct per conversation and turn. */
const logTurn = (conversation: number, turn: number) =>
  `Run ${conversation}, step ${turn}: the build log of src/module${turn}.ts. ${`error TS2345 at src/module${conversation % 97}.ts:${turn + 12}, expected string got number. `.repeat(36)}`;

/** A history of 7 messages (about 2,500 tokens): over a 2,000-token window on its first request. */
function overWindowBody(conversation: number): string {
  const messages: Array<{ role: string; content: string }> = [];
  for (let turn = 0; turn < 4; turn += 1) {
    messages.push({ role: 'user', content: logTurn(conversation, turn) });
    if (turn < 3) messages.push({ role: 'assistant', content: `Fixed step ${turn} of run ${conversation}.` });
  }
  return JSON.stringify({ model: MODEL, max_tokens: 32, messages });
}

const anthropicHeaders = (key: string, conversation: string) => ({
  'content-type': 'application/json',
  'x-api-key': key,
  'anthropic-version': '2023-06-01',
  'x-compactd-conversation': conversation,
});

/** Creates the conversations `ids`, `concurrency` at a time. */
async function createConversations(
  baseUrl: string,
  key: string,
  ids: readonly string[],
  body: Record<string, unknown>,
  concurrency = 16,
): Promise<void> {
  const api = apiCalls(fetchHttp(baseUrl, key, 60_000));
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) await api.createConversation(ids[next++] as string, body);
    }),
  );
}

async function countRows(stack: ChaosStack, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = await stack.db.db.execute<{ n: number }>(query);
  return Number(row?.n ?? 0);
}

const tenantIdOf = async (stack: ChaosStack, name: string): Promise<string> => {
  const [row] = await stack.db.db.execute<{ id: string }>(sql`select id from tenants where name = ${name}`);
  if (!row) throw new Error(`no tenant ${name}`);
  return row.id;
};

interface Setting {
  stack: ChaosStack;
  baseUrl: string;
  sim: LlmSim;
  agent: Agent;
  counter: StatementCounter;
  workerEnv: Record<string, string>;
}

/** 1. N conversations over their window under a tenant limited to K active compactions, no worker running: jobs started ≤ K. */
async function measureQuota(rec: ScenarioRecorder, at: Setting, options: GatewayOptions): Promise<void> {
  const { conversations: n, maxActive: k } = options.quota;
  const tenant = await createApiKey(at.stack.db.db, { tenantName: 'chaos-quota' });
  if (!(await setTenantQuotas(at.stack.db.db, 'chaos-quota', { maxActiveCompactions: k }))) throw new Error('could not set the quota');
  const ids = Array.from({ length: n }, (_, i) => `q-${i}`);
  await createConversations(at.baseUrl, tenant.key, ids, WAITER_CONVERSATION);
  const abort = new AbortController();
  // one listener per request on the shared signal
  setMaxListeners(n + 10, abort.signal);
  const answers: GatewayAnswer[] = [];
  const sent = ids.map((id, i) =>
    sendGateway(at.baseUrl, at.agent, {
      path: '/gateway/anthropic/v1/messages',
      headers: anthropicHeaders(tenant.key, id),
      body: overWindowBody(10_000 + i),
      timeoutMs: 150_000,
      signal: abort.signal,
    }).then((a) => {
      answers.push(a);
      return a;
    }),
  );
  // the requests a compaction was refused for go upstream at once; the others wait on their jobs
  const deadline = Date.now() + 30_000;
  while (answers.length < n - k && Date.now() < deadline) await pause(100);
  await pause(1_000);
  const tenantId = await tenantIdOf(at.stack, 'chaos-quota');
  const started = await countRows(at.stack, sql`select count(*)::int as n from compaction_jobs where tenant_id = ${tenantId}`);
  const answered = [...answers];
  // the ones still waiting are clients that give up (their jobs run once workers start)
  abort.abort();
  await Promise.all(sent);
  rec.figure(`quotas: conversations over their window (tenant limited to ${k} active compactions)`, n);
  rec.expect(`quotas: compactions started (at most ${k})`, started, '<=', k);
  rec.figure('quotas: requests answered without waiting (by status)', statusCounts(answered));
  rec.figure(
    'quotas: their x-compactd-gateway',
    [...new Set(answered.map((a) => a.headers['x-compactd-gateway'] ?? 'none'))].join(', ') || 'none',
  );
  rec.expect(
    'quotas: answers 5xx or without an answer',
    answered.filter((a) => typeof a.status !== 'number' || a.status >= 500).length,
    '==',
    0,
  );
}

interface ReadPhase {
  reads: number;
  p50: number;
  p99: number;
  failed: number;
}

function readPhase(samples: readonly ReadSample[]): ReadPhase {
  const ms = samples.map((s) => s.ms);
  return {
    reads: samples.length,
    p50: round(percentile(ms, 50)),
    p99: round(percentile(ms, 99)),
    failed: samples.filter((s) => s.outcome !== 200).length,
  };
}

const showPhase = (p: ReadPhase) => `${p.p50} / ${p.p99} (${p.reads} reads, ${p.failed} failed)`;

/** 2. Requests waiting on compactions that cannot finish yet: statements per second and another tenant's reads; then workers, and every answer. */
async function measureWaiters(rec: ScenarioRecorder, at: Setting, options: GatewayOptions): Promise<void> {
  const n = options.waiters;
  const { stack, baseUrl } = at;
  const ids = Array.from({ length: n }, (_, i) => `w-${i}`);
  await createConversations(baseUrl, stack.keys.tenant, [...ids, 'w-cap'], WAITER_CONVERSATION);
  const other = apiCalls(fetchHttp(baseUrl, stack.keys.other, 60_000));
  await other.createConversation('b-read', { policy: { auto: false } });
  await other.append(
    'b-read',
    Array.from({ length: 6 }, (_, i) => liveTurn(i)),
  );
  const tenantId = await tenantIdOf(stack, 'chaos');
  const jobsOfWaiters = () =>
    countRows(
      stack,
      sql`select count(*)::int as n from compaction_jobs j join conversations c on c.id = j.conversation_id where j.tenant_id = ${tenantId} and c.external_id like 'w-%' and c.external_id <> 'w-cap'`,
    );
  const firstCall = at.sim.callLog().at(-1)?.id ?? 0;

  const probe = startReadProbe(baseUrl, stack.keys.other, '/v1/conversations/b-read/messages', { timeoutMs: 30_000, everyMs: 50 });
  await pause(2_000);
  const idleFrom = Date.now();
  const idle = await statementRate(at.counter, options.windowMs);
  const idleUntil = Date.now();

  const answers: GatewayAnswer[] = [];
  // on a shared machine, how much of the CPU other processes took while these requests were served
  const cpuFrom = sampleCpu([stack.pg.dataDir]);
  const arrivalFrom = Date.now();
  const sent = ids.map((id, i) =>
    sendGateway(baseUrl, at.agent, {
      path: '/gateway/anthropic/v1/messages',
      headers: anthropicHeaders(stack.keys.tenant, id),
      body: overWindowBody(i),
      timeoutMs: 300_000,
    }).then((a) => {
      answers.push(a);
      return a;
    }),
  );
  // every request has stored its history and started its compaction: from then on they wait
  const deadline = Date.now() + 120_000;
  let jobs: number;
  while ((jobs = await jobsOfWaiters()) < n && Date.now() < deadline && answers.length < n) await pause(250);
  const arrivalMs = Date.now() - arrivalFrom;
  await pause(1_000);
  const waitingFrom = Date.now();
  const waiting = await statementRate(at.counter, options.windowMs);
  const waitingUntil = Date.now();
  const answeredWhileWaiting = answers.length;

  // one more request of the tenant, over its window: past COMPACTD_TENANT_MAX_WAITERS (= n), it cannot wait
  const cap = await sendGateway(baseUrl, at.agent, {
    path: '/gateway/anthropic/v1/messages',
    headers: anthropicHeaders(stack.keys.tenant, 'w-cap'),
    body: overWindowBody(n),
    timeoutMs: 30_000,
  });
  const samples = await probe.stop();

  const workersFrom = Date.now();
  for (let w = 0; w < options.workers; w += 1) await stack.startWorker(at.workerEnv, `worker-gateway-${w + 1}`);
  const outcomes = await Promise.all(sent);
  const lastAnswer = outcomes.reduce((latest, a) => Math.max(latest, a.answeredAt), 0);
  const cpu = cpuShares(cpuFrom, sampleCpu([stack.pg.dataDir]));

  const baseline = readPhase(samples.filter((s) => s.at >= idleFrom && s.at + s.ms <= idleUntil));
  const arrival = readPhase(overlapping(samples, arrivalFrom, waitingFrom));
  const during = readPhase(samples.filter((s) => s.at >= waitingFrom && s.at <= waitingUntil));
  const compacted = outcomes.filter((a) => a.status === 200 && a.headers['x-compactd-gateway'] === 'compacted');
  const modes = new Map<string, number>();
  for (const a of outcomes)
    modes.set(
      `${a.status} ${a.headers['x-compactd-gateway'] ?? ''}`.trim(),
      (modes.get(`${a.status} ${a.headers['x-compactd-gateway'] ?? ''}`.trim()) ?? 0) + 1,
    );
  const calls = at.sim.callLog().filter((c) => c.id > firstCall);
  const overWindow = calls.filter((c) => c.inputTokens > WAITER_CONVERSATION.contextLimit).length;
  const statuses = await stack.db.db.execute<{ status: string; n: number }>(
    sql`select j.status, count(*)::int as n from compaction_jobs j join conversations c on c.id = j.conversation_id where j.tenant_id = ${tenantId} and c.external_id like 'w-%' and c.external_id <> 'w-cap' group by j.status order by j.status`,
  );
  const completed = Number(statuses.find((row) => row.status === 'completed')?.n ?? 0);
  // how long after its compaction ended each request was answered (the job waiters' wake-up, then the upstream call)
  const finished = new Map(
    (
      await stack.db.db.execute<{ id: string; ms: number }>(
        sql`select c.external_id as id, (extract(epoch from max(j.finished_at)) * 1000)::float8 as ms from compaction_jobs j join conversations c on c.id = j.conversation_id where j.tenant_id = ${tenantId} and c.external_id like 'w-%' group by c.external_id`,
      )
    ).map((row) => [row.id, Number(row.ms)]),
  );
  const afterJob = outcomes.flatMap((a, i) => {
    const end = finished.get(`w-${i}`);
    return end === undefined || a.status !== 200 ? [] : [a.answeredAt - end];
  });
  const added = waiting.perSecond - idle.perSecond;
  const allowed = n * POLLING_STATEMENTS_PER_WAITER * MAX_SHARE_OF_POLLING;

  rec.figure('waiters: gateway requests, each its own conversation over its window', n);
  rec.figure('waiters: all stored, their compactions queued, after (s)', `${round(arrivalMs / 1000)} (${jobs} jobs)`);
  rec.figure('waiters: Postgres statements per second, idle (tenant B reading)', round(idle.perSecond));
  rec.figure(`waiters: Postgres statements per second while ${n} wait`, round(waiting.perSecond));
  rec.expect(
    `waiters: statements per second added by ${n} waiting requests (polling: ${n * POLLING_STATEMENTS_PER_WAITER})`,
    round(added),
    '<=',
    allowed,
  );
  rec.figure('waiters: statements per waiting request per second', round(added / n, 3));
  rec.figure("waiters: tenant B's read, quiet, p50 / p99 (ms)", showPhase(baseline));
  rec.figure("waiters: tenant B's read while the requests arrive, p50 / p99 (ms)", showPhase(arrival));
  rec.figure("waiters: tenant B's read while they wait, p50 / p99 (ms)", showPhase(during));
  rec.expect("waiters: tenant B's read p50 while they wait / quiet p50", round(during.p50 / baseline.p50, 2), '<=', MAX_READ_P50_RATIO);
  rec.expect("waiters: tenant B's reads failed while they wait", during.failed, '==', 0);
  rec.expect('waiters: answered before any compaction could run', answeredWhileWaiting, '==', 0);
  rec.expect(
    `waiters: request ${n + 1} of the tenant (waiter cap ${n}) answered`,
    typeof cap.status === 'number' ? cap.status : -1,
    '==',
    429,
  );
  rec.figure(`waiters: request ${n + 1}: retry-after, error type`, `${cap.headers['retry-after'] ?? 'none'}, ${errorType(cap.text)}`);
  rec.expect(`waiters: answered 200 with x-compactd-gateway: compacted (of ${n})`, compacted.length, '==', n);
  rec.figure('waiters: answers by status and mode', [...modes].map(([mode, count]) => `${mode} ×${count}`).join(', '));
  rec.expect('waiters: compactions completed', completed, '==', n);
  rec.figure('waiters: compactions by status', statuses.map((row) => `${row.status} ${row.n}`).join(', '));
  rec.figure('waiters: upstream requests', calls.length);
  rec.expect('waiters: upstream requests over their window', overWindow, '==', 0);
  rec.figure(
    `waiters: upstream input tokens, max (window ${WAITER_CONVERSATION.contextLimit})`,
    calls.reduce((max, c) => Math.max(max, c.inputTokens), 0),
  );
  rec.figure(`waiters: ${options.workers} worker(s) started → last answer (s)`, round((lastAnswer - workersFrom) / 1000));
  if (cpu)
    rec.figure(
      'waiters: machine CPU busy / this suite / other processes / steal, burst to last answer (%)',
      `${cpu.busy} / ${cpu.ours} / ${cpu.others} / ${cpu.steal}`,
    );
  rec.figure(
    'waiters: compaction ended → request answered, p50 / p99 / max (ms)',
    `${round(percentile(afterJob, 50))} / ${round(percentile(afterJob, 99))} / ${round(Math.max(...afterJob))}`,
  );
  rec.note(
    `Waiters: tenant A's ${n} conversations are created beforehand with a ${WAITER_CONVERSATION.contextLimit}-token window (policy ${JSON.stringify(WAITER_CONVERSATION.policy)}); ` +
      `each gets one POST /gateway/anthropic/v1/messages (its own socket, \`x-compactd-conversation\`) carrying a history of 7 messages (about 2,500 tokens), all sent at once, ` +
      'so each request stores its history, starts its compaction and waits for it. No worker runs yet, so none can finish. The API runs with ' +
      `COMPACTD_TENANT_MAX_ACTIVE and COMPACTD_TENANT_COMPACTIONS_PER_MINUTE at 1,000,000 and COMPACTD_TENANT_MAX_WAITERS at ${n}. ` +
      `Statements are pg_stat_statements' calls in the database (BEGIN and COMMIT included, the counter's own reads left out) over ${options.windowMs / 1000} s: ` +
      'idle (only tenant B reading) before the burst, and from 1 s after the last of the jobs is in the table. Tenant B reads its own 6-message conversation ' +
      '(GET /v1/conversations/:id/messages) every 50 ms throughout (sent on schedule, at most 50 in flight): quiet = the idle window, arrival = reads in flight ' +
      `while the requests came in, wait = reads sent during the statement window. Then request ${n + 1} (another conversation over its window) must get 429, ` +
      `and ${options.workers} worker process(es) (local summarizer) start; every request must then be answered 200 from its compacted context.`,
  );
}

function errorType(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { type?: string } };
    return body.error?.type ?? 'none';
  } catch {
    return 'not JSON';
  }
}

/** Request headers no provider may see, each value marked so it is found wherever it lands. */
const HOSTILE_REQUEST_HEADERS: Record<string, string> = {
  cookie: 'session=chaos-secret-cookie',
  'x-forwarded-for': '203.0.113.7',
  'x-real-ip': '203.0.113.7',
  forwarded: 'for=203.0.113.7;proto=https;by=chaos-secret-forwarded',
  'x-forwarded-host': 'chaos-secret-host.example',
  'x-forwarded-proto': 'https',
  'x-forwarded-access-token': 'chaos-secret-access-token',
  'cf-access-jwt-assertion': 'chaos-secret-cf-jwt',
  'cf-connecting-ip': '203.0.113.7',
  'proxy-authorization': 'Basic Y2hhb3Mtc2VjcmV0LXByb3h5',
  // named in Connection: hop-by-hop, whatever its name (these two would pass the allow-list otherwise)
  connection: 'keep-alive, x-stainless-chaos-hop, anthropic-chaos-hop, x-chaos-hop',
  'x-stainless-chaos-hop': 'chaos-secret-hop-1',
  'anthropic-chaos-hop': 'chaos-secret-hop-2',
  'x-chaos-hop': 'chaos-secret-hop-3',
};

/** Response headers a provider sends that are the operator's, not the tenant's. */
const OPERATOR_RESPONSE_HEADERS: Record<string, string> = {
  'set-cookie': 'provider-session=chaos-secret-set-cookie; Path=/',
  'anthropic-organization-id': 'org-chaos-operator',
  'openai-organization': 'org-chaos-operator',
  'openai-project': 'proj-chaos-operator',
  'anthropic-ratelimit-requests-remaining': '3999',
  'x-ratelimit-remaining-requests': '3999',
};

/** 3. What reaches the provider of a client's headers, and what comes back of the provider's. */
async function measureHeaders(rec: ScenarioRecorder, at: Setting): Promise<void> {
  const key = at.stack.keys.tenant;
  at.sim.configure({ responseHeaders: OPERATOR_RESPONSE_HEADERS });
  const firstCall = at.sim.callLog().at(-1)?.id ?? 0;
  const provider = {
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'prompt-caching-2024-07-31',
    'x-stainless-retry-count': '0',
    'user-agent': 'chaos-gateway/1.0',
  };
  const requests = [
    {
      path: '/gateway/anthropic/v1/messages',
      auth: { 'x-api-key': key },
      body: { model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
    },
    {
      path: '/gateway/anthropic/v1/messages',
      auth: { 'x-api-key': key },
      body: { model: MODEL, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hello, streamed' }] },
    },
    {
      path: '/gateway/openai/v1/chat/completions',
      auth: { authorization: `Bearer ${key}` },
      body: { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
    },
    {
      path: '/gateway/openai/v1/chat/completions',
      auth: { authorization: `Bearer ${key}` },
      body: { model: 'gpt-4o-mini', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hello, streamed' }] },
    },
  ];
  const answers: GatewayAnswer[] = [];
  for (const [i, r] of requests.entries()) {
    answers.push(
      await sendGateway(at.baseUrl, at.agent, {
        path: r.path,
        headers: {
          'content-type': 'application/json',
          ...provider,
          ...HOSTILE_REQUEST_HEADERS,
          ...r.auth,
          'x-compactd-conversation': `hdr-${i}`,
        },
        body: JSON.stringify(r.body),
        timeoutMs: 60_000,
      }),
    );
  }
  at.sim.configure({ responseHeaders: {} });
  const calls = at.sim.callLog().filter((c) => c.id > firstCall);
  const hostileNames = new Set(Object.keys(HOSTILE_REQUEST_HEADERS).filter((name) => name !== 'connection'));
  const reached: string[] = [];
  let secretValues = 0;
  for (const call of calls) {
    for (const [name, value] of Object.entries(call.headers ?? {})) {
      if (hostileNames.has(name) || name.startsWith('x-compactd-') || (name === 'connection' && value.includes('chaos')))
        reached.push(name);
      if (value.includes('chaos-secret') || value.includes(key) || value.includes('203.0.113.7')) secretValues += 1;
    }
  }
  const backNames = new Set(Object.keys(OPERATOR_RESPONSE_HEADERS));
  const cameBack = answers.flatMap((a) => Object.keys(a.headers).filter((name) => backNames.has(name)));
  const forwarded = [...new Set(calls.flatMap((c) => Object.keys(c.headers ?? {})))].sort();
  rec.figure(
    'headers: requests sent with cookie, forwarded, proxy and Connection-named headers (answered)',
    `${answers.length} (${statusCounts(answers)})`,
  );
  rec.expect(
    'headers: upstream requests recorded with their headers',
    calls.filter((c) => c.headers !== undefined).length,
    '==',
    requests.length,
  );
  rec.expect(`headers: of the ${hostileNames.size} hostile request headers, occurrences upstream`, reached.length, '==', 0);
  if (reached.length > 0) rec.note(`Headers that reached the provider: ${[...new Set(reached)].join(', ')}.`);
  rec.expect("headers: upstream header values carrying a marked secret, the client's IP or its compactd key", secretValues, '==', 0);
  rec.figure('headers: what the provider got (names)', forwarded.join(', '));
  rec.expect('headers: operator headers relayed back (set-cookie, organization, rate limits)', cameBack.length, '==', 0);
  if (cameBack.length > 0) rec.note(`Provider headers relayed back to the tenant: ${[...new Set(cameBack)].join(', ')}.`);
  rec.note(
    `Headers: ${requests.length} requests on compactd's provider key (Anthropic and OpenAI, streamed and not), each with the provider's own headers (anthropic-version, anthropic-beta, x-stainless-retry-count, user-agent) and ` +
      `${Object.keys(HOSTILE_REQUEST_HEADERS).join(', ')} (connection naming x-stainless-chaos-hop, anthropic-chaos-hop and x-chaos-hop, which are sent too). ` +
      "llm-sim records each request's headers; every value is also searched for the marked secrets, the client's address and its compactd key. llm-sim answers with " +
      `${Object.keys(OPERATOR_RESPONSE_HEADERS).join(', ')}, none of which may reach a client on the operator's key.`,
  );
}

/** 4. Malformed requests to the gateway's body-taking routes: no 5xx, every answer in the provider's error shape. */
async function measureMalformed(rec: ScenarioRecorder, at: Setting, options: GatewayOptions): Promise<void> {
  const cases = malformedCases({ perRoute: options.malformedPerRoute, seed: 32 });
  const key = at.stack.keys.tenant;
  const results: Array<{ c: MalformedCase; a: GatewayAnswer }> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < cases.length) {
        const c = cases[next++] as MalformedCase;
        const auth = c.route === 'openai' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
        const a = await sendGateway(at.baseUrl, at.agent, {
          path: c.path,
          headers: { ...auth, ...(c.contentType === null ? {} : { 'content-type': c.contentType }) },
          body: c.body,
          timeoutMs: 60_000,
        });
        results.push({ c, a });
      }
    }),
  );
  const serverErrors = results.filter((r) => typeof r.a.status === 'number' && r.a.status >= 500);
  const unanswered = results.filter((r) => typeof r.a.status !== 'number');
  const badShape = results.filter((r) => typeof r.a.status === 'number' && r.a.status >= 400 && !inProviderShape(r.c.route, r.a.text));
  rec.figure(
    'malformed: requests (Anthropic messages / count_tokens / OpenAI chat completions)',
    `${results.length} (${['anthropic', 'count_tokens', 'openai'].map((route) => results.filter((r) => r.c.route === route).length).join(' / ')})`,
  );
  rec.figure('malformed: answers by status', statusCounts(results.map((r) => r.a)));
  rec.expect('malformed: answers 5xx', serverErrors.length, '==', 0);
  rec.expect('malformed: requests without an answer', unanswered.length, '==', 0);
  rec.expect("malformed: errors not in the provider's error shape", badShape.length, '==', 0);
  const modes = new Map<string, number>();
  for (const r of results.filter((x) => x.a.status === 200))
    modes.set(r.a.headers['x-compactd-gateway'] ?? 'none', (modes.get(r.a.headers['x-compactd-gateway'] ?? 'none') ?? 0) + 1);
  rec.figure('malformed: answers 200 by x-compactd-gateway', [...modes].map(([mode, count]) => `${mode} ×${count}`).join(', ') || 'none');
  for (const r of [...serverErrors, ...unanswered, ...badShape].slice(0, 8))
    rec.note(`Malformed: ${r.c.name} → ${r.a.status} ${r.a.text.slice(0, 160)}`);
  for (const r of results
    .filter((x) => x.a.status === 200 && (x.a.headers['x-compactd-gateway'] ?? '').includes('not-stored'))
    .slice(0, 4)) {
    rec.note(`Malformed: ${r.c.name} → 200, ${r.a.headers['x-compactd-gateway']}`);
  }
  rec.note(
    `Malformed: ${results.length} requests, 8 at a time, authenticated, to POST /gateway/anthropic/v1/messages, /gateway/anthropic/v1/messages/count_tokens and /gateway/openai/v1/chat/completions: ` +
      `per route ${options.malformedPerRoute} or more (field, value) pairs (every field and value at least once, the rest drawn with seed 32) setting a field of an otherwise valid body ` +
      '(model, max_tokens, messages and their roles, content and blocks, system, metadata.user_id / user, stream, tools, tool calls and results) to null, a boolean, numbers, a wrong-typed ' +
      "string, array or object, NUL bytes, lone surrogates, a 2 MB string, or an object or array nested 200,000 deep; the fuzz suite's texts that are not JSON or not an object; bytes that are not UTF-8; " +
      'a tool input nested 200,000 deep; NUL in every text field, then one NUL at a time in a tool id, a tool name, a tool input key or value, OpenAI function arguments (as the JSON escape) and a tool output; a 5 MB message; a 33 MB body (the gateway takes 32 MB); and 12 wrong or missing content types. ' +
      "An error must be 4xx in the provider's shape (Anthropic {type: error, error: {type, message}}, OpenAI {error: {message}}), whether the gateway or llm-sim refused it.",
  );
}

/** 5. Incidents: the session compacts again afterwards, and the next upstream request is at most half the largest before it. */
async function measureIncidents(rec: ScenarioRecorder, at: Setting): Promise<void> {
  const outcomes = await runIncidents({ baseUrl: at.baseUrl, key: at.stack.keys.tenant, sim: at.sim, maxTurns: 30 });
  for (const o of outcomes) {
    rec.figure(`incidents: ${o.name}: incident request's x-compactd-gateway`, o.incidentMode);
    rec.figure(
      `incidents: ${o.name}: turns until compacted, largest before → next upstream (input tokens)`,
      o.compacted ? `${o.turns}, ${o.largestBefore} → ${o.after}` : `not compacted after ${o.turns} turns${o.error ? `: ${o.error}` : ''}`,
    );
    rec.expect(
      `incidents: ${o.name}: next upstream request / largest before`,
      o.compacted ? round(o.after / o.largestBefore, 2) : Number.POSITIVE_INFINITY,
      '<=',
      MAX_INCIDENT_RATIO,
    );
  }
  rec.note(
    `Incidents: each on a conversation of its own created with a ${INCIDENT_CONVERSATION.contextLimit}-token window (policy ${JSON.stringify(INCIDENT_CONVERSATION.policy)}), through the Anthropic and OpenAI SDKs ` +
      "(retries off) on compactd's provider key: an edited earlier turn (turn 2 changed, the history sent again from there); a retry of a request whose answer was already stored; a tool output " +
      "holding a NUL and a lone surrogate (`cat` of a binary); an OpenAI tool-call-only answer stored with content null and re-sent with ''; and Claude Code's side requests: a title request with the main " +
      "loop's metadata.user_id before each turn, the first of them before the main loop's first turn. After the incident the session sends one turn of about 600 tokens at a time (waiting for the answer " +
      "to be stored and the conversation's compactions to end) until a compaction has completed, then one more request; its input tokens, as llm-sim counts them, over the largest of the session's " +
      'requests before it is the figure (at most 30 turns).',
  );
}

/** Runs one part; a part that throws is recorded as a missed target with its error, and the others still run. */
async function part(rec: ScenarioRecorder, name: string, run: () => Promise<void>): Promise<void> {
  const started = Date.now();
  try {
    await run();
    rec.figure(`${name}: wall time (s)`, round((Date.now() - started) / 1000));
  } catch (error) {
    rec.expect(`${name}: ran to the end`, 0, '==', 1);
    rec.note(`${name} stopped early: ${error instanceof Error ? error.message.slice(0, 600) : String(error)}`);
  }
}

export async function runGateway(options: GatewayOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('gateway', 'The gateway under real clients', options.variant);
  const sim = await startLlmSim({ host: '127.0.0.1', port: 0, profile: 'instant', keepBodies: 50, logLimit: 1_000_000 });
  const env = {
    ANTHROPIC_BASE_URL: sim.url,
    ANTHROPIC_API_KEY: OPERATOR_KEYS.anthropic,
    OPENAI_BASE_URL: `${sim.url}/v1`,
    OPENAI_API_KEY: OPERATOR_KEYS.openai,
    COMPACTD_SUMMARIZER: 'local',
    COMPACTD_TENANT_MAX_ACTIVE: '1000000',
    COMPACTD_TENANT_COMPACTIONS_PER_MINUTE: '1000000',
    COMPACTD_TENANT_MAX_WAITERS: String(options.waiters),
    // the reconciler at its defaults: the stack's 3-s idle time (for the crash suites) would
    // sweep the waiters' whole backlog again and again while the workers work through it
    COMPACTD_RECONCILE_EVERY_MS: '15000',
    COMPACTD_RECONCILE_IDLE_MS: '20000',
  };
  const stack = await startChaosStack({ env, ...(options.logDir ? { logDir: options.logDir } : {}) });
  const agent = burstAgent();
  let counter: StatementCounter | null = null;
  const started = Date.now();
  try {
    counter = await countStatements(stack);
    const api = await stack.startApi();
    const at: Setting = { stack, baseUrl: api.url, sim, agent, counter, workerEnv: {} };
    await part(rec, 'quotas', () => measureQuota(rec, at, options));
    await part(rec, 'waiters', () => measureWaiters(rec, at, options));
    // the parts below need a worker; the waiters' part starts them (again here if it stopped before)
    if (!stack.processes.some((p) => p.role === 'worker')) await stack.startWorker({}, 'worker-gateway-1');
    await part(rec, 'headers', () => measureHeaders(rec, at));
    await part(rec, 'malformed', () => measureMalformed(rec, at, options));
    if (options.incidents) await part(rec, 'incidents', () => measureIncidents(rec, at));
    recordCrashes(
      rec,
      stack.crashes.filter((c) => c.at >= started),
    );
    rec.note(
      `One \`compactd api\` process (default pool), private Postgres (pg_stat_statements preloaded) and Redis; llm-sim (profile instant, in the harness's process) is the provider behind ` +
        "compactd's configured Anthropic and OpenAI keys; compactions are summarized by the local summarizer in worker processes (default concurrency, the reconciler at its " +
        'defaults), started once the waiters are measured.',
    );
  } finally {
    agent.destroy();
    await counter?.close().catch(() => undefined);
    await stack.close();
    await sim.close();
  }
  return rec.finish();
}
