import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';

import { MATRIX_VALUES, matrixRequests } from '../fuzz/field-matrix.js';
import { rawHttpBattery } from '../fuzz/raw-http.js';
import { type FuzzKeys, type FuzzRequest, requestArb } from '../fuzz/requests.js';
import { injectHttp } from '../lib/http.js';
import { ScenarioRecorder, type ScenarioResult } from '../lib/result.js';
import { listRoutes, type RouteInfo } from '../lib/routes.js';
import { startChaosStack } from '../lib/stack.js';
import { buildWorld, fingerprint, type World } from '../lib/world.js';

/**
 * Issue 10 §5: generated requests (fast-check, from the route schemas the API's zod schemas
 * compile to, plus hand-picked hostile input) against every route the app serves. Every
 * answer must be < 500, every error RFC 9457 problem+json with a matching status, and a
 * rejected request must leave the database exactly as it was.
 */

export interface FuzzOptions {
  variant: 'quick' | 'full';
  requests: number;
  seed: number;
  logDir?: string;
}

export const FUZZ_FULL: FuzzOptions = { variant: 'full', requests: 10_000, seed: 50 };
export const FUZZ_QUICK: FuzzOptions = { variant: 'quick', requests: 1_000, seed: 50 };

const ADMIN_TOKEN = 'chaos-admin-token-0123';
const METRICS_TOKEN = 'chaos-metrics-token-0123';
const REQUEST_TIMEOUT_MS = 20_000;

/** Bodies too big to draw: over the body limit, a message over the message limit, too many messages. */
function bigRequests(key: string): FuzzRequest[] {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const huge = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(20 * 1024 * 1024) }] });
  const bigMessage = JSON.stringify({ messages: [{ role: 'user', content: 'y'.repeat(3 * 1024 * 1024) }] });
  const many = JSON.stringify({ messages: Array.from({ length: 1_001 }, () => ({ role: 'user', content: 'hi' })) });
  return [
    { method: 'POST', url: '/v1/conversations/world-a/messages', headers, body: huge, kind: '20 MB body' },
    {
      method: 'POST',
      url: '/v1/conversations',
      headers,
      body: JSON.stringify({ metadata: { blob: 'z'.repeat(20 * 1024 * 1024) } }),
      kind: '20 MB body',
    },
    { method: 'POST', url: '/v1/conversations/world-a/messages', headers, body: bigMessage, kind: '3 MB message' },
    { method: 'POST', url: '/v1/conversations/world-a/messages', headers, body: many, kind: '1001 messages' },
  ];
}

interface Verdict {
  status: number;
  problems: string[];
}

async function send(
  app: FastifyInstance,
  request: FuzzRequest,
): Promise<{ status: number; contentType: string; body: string } | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), REQUEST_TIMEOUT_MS)));
  const res = app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: request.headers,
    ...(request.body === undefined ? {} : { payload: request.body }),
  });
  try {
    const outcome = await Promise.race([res, timeout]);
    if (outcome === 'timeout') return outcome;
    return { status: outcome.statusCode, contentType: String(outcome.headers['content-type'] ?? ''), body: outcome.body };
  } finally {
    clearTimeout(timer);
  }
}

/** Anthropic `{type: "error", error: {type, message}}` or OpenAI `{error: {message, type}}` */
function isProviderError(body: string): boolean {
  try {
    const error = (JSON.parse(body) as { error?: { message?: unknown } }).error;
    return typeof error === 'object' && error !== null && typeof error.message === 'string';
  } catch {
    return false;
  }
}

function judge(request: FuzzRequest, res: { status: number; contentType: string; body: string }): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`status ${res.status}`);
  if (res.status >= 400 && request.method !== 'HEAD' && request.url.startsWith('/gateway/')) {
    // the providers' APIs answer in the providers' error shapes, which their SDKs read
    if (!isProviderError(res.body)) problems.push('gateway error not in the provider error shape');
  } else if (res.status >= 400 && request.method !== 'HEAD') {
    if (!res.contentType.startsWith('application/problem+json')) problems.push(`error as ${res.contentType || 'no content type'}`);
    else {
      try {
        const body = JSON.parse(res.body) as Record<string, unknown>;
        if (
          body['status'] !== res.status ||
          typeof body['code'] !== 'string' ||
          typeof body['type'] !== 'string' ||
          typeof body['title'] !== 'string'
        ) {
          problems.push('problem body incomplete or status mismatch');
        }
      } catch {
        problems.push('problem body is not JSON');
      }
    }
  }
  return problems;
}

/** Erasing the world's conversation early would leave every later request a 404: those requests go last. */
const isErasing = (route: RouteInfo) => route.method === 'DELETE' && route.path === '/v1/conversations/:id';

/** `perRoute` requests per route, interleaved so state one builds (a conversation, a job) meets requests of the others. */
function generate(
  routes: RouteInfo[],
  world: World,
  keys: FuzzKeys,
  perRoute: number,
  seed: number,
): { requests: FuzzRequest[]; erasing: FuzzRequest[] } {
  const generated = routes.map((route, i) => ({
    route,
    list: fc.sample(requestArb(route, world, keys), { numRuns: perRoute, seed: seed + i }),
  }));
  const requests: FuzzRequest[] = [];
  for (let i = 0; i < perRoute; i++)
    for (const { route, list } of generated) if (list[i] && !isErasing(route)) requests.push(list[i] as FuzzRequest);
  return { requests, erasing: generated.filter(({ route }) => isErasing(route)).flatMap(({ list }) => list) };
}

/**
 * Fields that once answered 500 (issue 15): the matrix must reach each, whatever routes or
 * schemas change. `METHOD path-pattern kind`.
 */
const REQUIRED_MATRIX_FIELDS = [
  'POST /v1/conversations matrix body.model',
  'POST /v1/conversations matrix body.metadata',
  'POST /v1/conversations matrix body.policy.systemPrompt',
  'POST /v1/conversations matrix body.policy.model',
  'POST /v1/conversations/:id/compactions matrix body.focus',
  'POST /v1/conversations/:id/compactions matrix body.model',
  'PUT /v1/webhook matrix body.secret',
  'PUT /v1/conversations/:id/webhook matrix body.secret',
  'GET /v1/conversations/:id/archive/search matrix query.q',
  'GET /v1/webhooks/deliveries matrix query.conversationId',
  'PATCH /v1/conversations/:id matrix body.policy.systemPrompt',
  'PATCH /v1/conversations/:id matrix body.metadata',
  'POST /v1/conversations/:id/messages matrix body.messages.0.content',
];

/** Secrets the run uses; none may ever appear in the API's log (a failed query once printed its parameters). */
const SECRET_MARKER = 'fuzz-secret-7f3a9c1e-';
const WORLD_SECRETS = ['world-a-secret-0123456789', 'tenant-secret-0123456789'];

function logScanner(secrets: readonly string[]) {
  const scan = { lines: 0, leaks: [] as string[] };
  return {
    scan,
    write(line: string) {
      scan.lines += 1;
      for (const secret of secrets) if (line.includes(secret)) scan.leaks.push(`${secret.slice(0, 12)}… in: ${line.slice(0, 300)}`);
    },
  };
}

const describe = (r: FuzzRequest) => `${r.method} ${r.url.slice(0, 120)} [${r.kind}] ${(r.body ?? '').slice(0, 160)}`;

export async function runFuzz(options: FuzzOptions): Promise<ScenarioResult> {
  const rec = new ScenarioRecorder('fuzz', 'Fuzzing every route', options.variant);
  const stack = await startChaosStack(options.logDir ? { logDir: options.logDir } : {});
  try {
    const log = logScanner([...WORLD_SECRETS, SECRET_MARKER, stack.keys.tenant, stack.keys.other, ADMIN_TOKEN, METRICS_TOKEN]);
    const { app } = await stack.inlineApp(
      { COMPACTD_ADMIN_TOKEN: ADMIN_TOKEN, COMPACTD_METRICS_TOKEN: METRICS_TOKEN },
      { logTo: (line) => log.write(line) },
    );
    const world = await buildWorld(stack, injectHttp(app, stack.keys.tenant), injectHttp(app, stack.keys.other));
    const routes = listRoutes(app);
    const keys = { owner: stack.keys.tenant, other: stack.keys.other, admin: ADMIN_TOKEN, metrics: METRICS_TOKEN };
    const perRoute = Math.ceil(options.requests / routes.length);
    const matrixByRoute = routes.map((route) => ({ route, requests: matrixRequests(route, world, keys, SECRET_MARKER) }));
    const matrix = matrixByRoute.flatMap((m) => m.requests);
    const covered = new Set(matrixByRoute.flatMap(({ route, requests }) => requests.map((r) => `${route.method} ${route.path} ${r.kind}`)));
    const sampled = generate(routes, world, keys, perRoute, options.seed);
    const requests = [...matrix, ...sampled.requests, ...bigRequests(stack.keys.tenant), ...sampled.erasing];

    const byClass = new Map<string, number>();
    const failures: string[] = [];
    let storedWhenRejected = 0;
    let timeouts = 0;
    let before = await fingerprint(stack.db.db);
    for (const request of requests) {
      const res = await send(app, request);
      if (res === 'timeout') {
        timeouts += 1;
        failures.push(`timeout: ${describe(request)}`);
        before = await fingerprint(stack.db.db);
        continue;
      }
      const verdict: Verdict = { status: res.status, problems: judge(request, res) };
      byClass.set(`${Math.floor(res.status / 100)}xx`, (byClass.get(`${Math.floor(res.status / 100)}xx`) ?? 0) + 1);
      const after = await fingerprint(stack.db.db);
      if (res.status >= 400 && after !== before) {
        storedWhenRejected += 1;
        verdict.problems.push('rejected but the database changed');
      }
      before = after;
      if (verdict.problems.length > 0) failures.push(`${verdict.problems.join(', ')}: ${describe(request)} → ${res.body.slice(0, 200)}`);
    }
    const raw = await rawHttpBattery(app);

    rec.figure('routes fuzzed', routes.length);
    rec.figure('field matrix requests (every string field × every hostile value)', matrix.length);
    rec.figure('string fields in the matrix', covered.size);
    const missing = REQUIRED_MATRIX_FIELDS.filter((field) => !covered.has(field));
    rec.expect('fields that once answered 500 and the matrix does not reach', missing.length, '==', 0);
    if (missing.length > 0) rec.note(`matrix misses: ${missing.join('; ')}`);
    rec.expect('requests sent (matrix + generated + large bodies)', requests.length, '>=', options.requests + matrix.length);
    rec.figure(
      'answers by class',
      [...byClass]
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
    );
    rec.expect('answers ≥ 500', failures.filter((f) => f.includes('status 5')).length, '==', 0);
    rec.expect('errors not problem+json (or incomplete)', failures.filter((f) => /error as|problem body/.test(f)).length, '==', 0);
    rec.expect('rejected requests that changed the database', storedWhenRejected, '==', 0);
    rec.expect('requests without an answer within 20 s', timeouts, '==', 0);
    rec.figure('raw HTTP requests (malformed at the protocol level)', raw.sent);
    rec.figure(
      'raw HTTP answers',
      [...new Set(raw.answers)]
        .sort()
        .map((s) => `${s}×${raw.answers.filter((a) => a === s).length}`)
        .join(', '),
    );
    rec.expect('raw HTTP: answers ≥ 500 or not problem+json', raw.failures.length, '==', 0);
    rec.figure('API log lines scanned for secrets', log.scan.lines);
    rec.expect('secrets (webhook secrets, API keys, tokens) found in the API log', log.scan.leaks.length, '==', 0);
    for (const leak of log.scan.leaks.slice(0, 5)) rec.note(`LEAK ${leak}`);
    for (const failure of [...failures, ...raw.failures].slice(0, Number(process.env['CHAOS_SHOW_FAILURES'] ?? 15)))
      rec.note(`FAILED ${failure}`);
    rec.note(
      `Field matrix: every string field of every /v1 route (body fields at any depth, array items, free-form objects as keys and values, ` +
        `query and path parameters) × ${MATRIX_VALUES.length} hostile values (${MATRIX_VALUES.map((v) => v.name).join(', ')}), each in an otherwise valid request.`,
    );
    rec.note(
      `${requests.length} requests through app.inject, ${perRoute} per route over ${routes.length} routes (read from the Fastify instance), fast-check seed ${options.seed}: ` +
        'parameters, query and bodies drawn from each route’s JSON Schema (compiled from the zod schemas), mutated (field dropped, retyped, replaced by a nasty ' +
        'value, unknown field added) or replaced by hand-picked hostile input (NUL, lone surrogates, huge and negative numbers, 5,000-deep nesting, prototype ' +
        'keys, 20 MB bodies, wrong content types, bad UUIDs and query strings); authorization mostly valid so requests reach the handlers.',
    );
    rec.note(
      'After every request the whole database is fingerprinted (row counts and digests of every table); a 4xx must leave it unchanged.',
    );
  } finally {
    await stack.close();
  }
  return rec.finish();
}
