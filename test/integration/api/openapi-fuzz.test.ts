import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bodyFields, type EdgeCase, edgeCases, type FieldLocation, setAt } from '../../../chaos/fuzz/edge-values.js';
import { encodeSegment, type FuzzKeys, type FuzzRequest, requestArb } from '../../../chaos/fuzz/requests.js';
import { exampleFor } from '../../../chaos/fuzz/schema-arb.js';
import type { JsonSchema, OpenApiOperation, OpenApiParameter, RouteInfo } from '../../../chaos/lib/routes.js';
import type { World } from '../../../chaos/lib/world.js';
import { loadRealTranscript } from '../../../harness/transcripts.js';
import { createApiKey } from '../../../src/db/repos/api-keys.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/**
 * Every route and method of the served OpenAPI document (/docs/json), against the real app
 * over real Postgres and Redis (workers included): each path, query, header and body field
 * gets the edge values of its declared type (numbers past int4/int8/double, dates the ISO
 * format admits and Postgres cannot hold, nasty strings, wrong types, prototype keys), then
 * fast-check draws whole requests from the same schemas, mutated and hostile. No answer is a
 * 5xx; every error is problem+json; a value the schema refuses is a 400 naming the field.
 */

const ADMIN_TOKEN = 'fuzz-admin-token-0123456789';
const METRICS_TOKEN = 'fuzz-metrics-token-0123456789';
/** generated requests per route (the chaos suite's full variant goes much further) */
const RUNS_PER_ROUTE = Number(process.env['FUZZ_RUNS_PER_ROUTE'] ?? 30);

let stack: Stack;
let keys: FuzzKeys;
let world: World;
let routes: RouteInfo[];
let components: Record<string, JsonSchema>;

beforeAll(async () => {
  // webhooks aim at a closed loopback port (allowed here): deliveries fail at once, nothing leaves the machine
  stack = await createStack({
    env: { COMPACTD_ADMIN_TOKEN: ADMIN_TOKEN, COMPACTD_METRICS_TOKEN: METRICS_TOKEN, COMPACTD_WEBHOOK_ALLOW: '127.0.0.1' },
  });
  const other = await createApiKey(stack.deps.db, { tenantName: 'fuzz-other' });
  keys = { owner: stack.key, other: other.key, admin: ADMIN_TOKEN, metrics: METRICS_TOKEN };
  const messages = loadRealTranscript('spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl').conversations[0]!.messages.slice(
    0,
    60,
  );
  await seedConversation(stack, 'fuzz-a', messages, { policy: { auto: false } });
  const job = await compact(stack, 'fuzz-a', { strategy: 'summarize', keepRecent: 4 });
  const done = await waitForJob(stack, job.id);
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  const webhook = await stack.app.inject({
    method: 'PUT',
    url: '/v1/conversations/fuzz-a/webhook',
    headers: stack.auth(),
    payload: { url: 'http://127.0.0.1:9/hook' },
  });
  expect(webhook.statusCode, webhook.body).toBe(200);
  const otherConversation = await stack.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: { authorization: `Bearer ${other.key}` },
    payload: { id: 'fuzz-b' },
  });
  expect(otherConversation.statusCode).toBe(201);
  world = {
    conversationId: 'fuzz-a',
    jobId: job.id,
    batchId: String((done.result as { batchIds: string[] }).batchIds[0]),
    otherConversationId: 'fuzz-b',
    secrets: [],
  };

  const doc = (await stack.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
    paths: Record<string, Record<string, OpenApiOperation>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  components = doc.components?.schemas ?? {};
  routes = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path: path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'), operation })),
  );
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

/** `$ref`s into the document's components, resolved (request schemas rarely have them; responses do). */
function resolve(schema: JsonSchema | undefined): JsonSchema {
  const ref = schema?.['$ref'];
  if (typeof ref === 'string') return resolve(components[ref.replace('#/components/schemas/', '')]);
  return schema ?? {};
}

const bodySchemaOf = (route: RouteInfo) => {
  const schema = route.operation?.requestBody?.content?.['application/json']?.schema;
  return schema ? resolve(schema) : null;
};

/** A body the route accepts, so one replaced field is the only fault. */
function validBody(route: RouteInfo, schema: JsonSchema): unknown {
  if (route.path.endsWith('/messages') && route.method === 'POST') return { messages: [{ role: 'user', content: 'fuzz probe' }] };
  if (route.method === 'PATCH') return { metadata: { probe: true } };
  if (route.path.endsWith('/webhook')) return { url: 'http://127.0.0.1:9/hook' };
  return exampleFor(schema);
}

/** The route's URL aimed at the seeded resources. */
function pathFor(route: RouteInfo, override?: { name: string; value: string }): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    if (override?.name === name) return encodeSegment(override.value);
    if (route.path.startsWith('/v1/conversations/')) return world.conversationId;
    if (route.path.startsWith('/v1/jobs/')) return world.jobId;
    if (route.path.startsWith('/v1/batches/')) return world.batchId;
    return 'unknown';
  });
}

const authFor = (route: RouteInfo) =>
  `Bearer ${route.path === '/metrics' ? keys.metrics : route.path.startsWith('/admin/') ? keys.admin : keys.owner}`;

interface Probe extends FuzzRequest {
  /** the field the edge value went into (`body.policy.chunkTokens`), when the schema decides it must be refused */
  mustRefuse?: string;
}

/** Refusals already seen on another route with the same field schema (a policy field on create and on update). */
const refusalsSeen = new Set<string>();

function edgeProbes(route: RouteInfo): Probe[] {
  const probes: Probe[] = [];
  const schema = bodySchemaOf(route);
  const base = schema ? validBody(route, schema) : undefined;
  const headers = { authorization: authFor(route), ...(base === undefined ? {} : { 'content-type': 'application/json' }) };
  const body = base === undefined ? {} : { body: JSON.stringify(base) };
  const probe = (location: FieldLocation, field: string, edge: EdgeCase, request: Omit<Probe, 'kind'>): Probe => ({
    ...request,
    kind: `${location} ${field} = ${edge.name}`,
    ...(edge.valid === false ? { mustRefuse: field } : {}),
  });
  for (const parameter of (route.operation?.parameters ?? []) as OpenApiParameter[]) {
    for (const edge of edgeCases(resolve(parameter.schema), parameter.in)) {
      const value = String(edge.value);
      if (parameter.in === 'path') {
        probes.push(
          probe('path', `params.${parameter.name}`, edge, {
            method: route.method,
            url: pathFor(route, { name: parameter.name, value }),
            headers,
            ...body,
          }),
        );
      } else if (parameter.in === 'query') {
        probes.push(
          probe('query', `querystring.${parameter.name}`, edge, {
            method: route.method,
            url: `${pathFor(route)}?${encodeURIComponent(parameter.name)}=${encodeSegment(value)}`,
            headers,
            ...body,
          }),
        );
      } else if (parameter.in === 'header') {
        probes.push(
          probe('header', `headers.${parameter.name}`, edge, {
            method: route.method,
            url: pathFor(route),
            headers: { ...headers, [parameter.name]: value },
            ...body,
          }),
        );
      }
    }
  }
  if (schema) {
    for (const field of bodyFields(schema)) {
      const name = ['body', ...field.path].join('.');
      for (const edge of edgeCases(field.schema, 'body')) {
        const refusal = `${name}|${JSON.stringify(field.schema)}|${edge.name}`;
        if (edge.valid === false && refusalsSeen.has(refusal)) continue;
        if (edge.valid === false) refusalsSeen.add(refusal);
        probes.push(
          probe('body', name, edge, {
            method: route.method,
            url: pathFor(route),
            headers,
            body: JSON.stringify(setAt(base, field.path, edge.value)),
          }),
        );
      }
    }
  }
  return probes;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** light-my-request refuses header values HTTP cannot carry (NUL, CR, LF): such a request never reaches a server. */
const unsendable = (error: unknown) =>
  ['ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE'].includes(String((error as { code?: unknown }).code));

async function send(request: FuzzRequest): Promise<Answer | null> {
  try {
    const res = await stack.app.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: request.headers,
      ...(request.body === undefined ? {} : { payload: request.body }),
    });
    return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), body: res.body };
  } catch (error) {
    if (unsendable(error)) return null;
    throw error;
  }
}

/** What is wrong with an answer, if anything. */
function problemsOf(request: Probe, res: Answer): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`status ${res.status}`);
  if (res.status >= 400) {
    if (!res.contentType.startsWith('application/problem+json')) return [...problems, `error as ${res.contentType || 'no content type'}`];
    let body: { type?: unknown; title?: unknown; status?: unknown; code?: unknown; errors?: Array<{ field: string }> };
    try {
      body = JSON.parse(res.body) as typeof body;
    } catch {
      return [...problems, 'problem body is not JSON'];
    }
    if (typeof body.type !== 'string' || typeof body.title !== 'string' || body.status !== res.status || typeof body.code !== 'string')
      problems.push('problem body incomplete');
  }
  if (request.mustRefuse !== undefined) {
    const field = request.mustRefuse;
    const named =
      res.status === 400 &&
      (JSON.parse(res.body) as { errors?: Array<{ field: string }> }).errors?.some(
        (e) => e.field === field || e.field.startsWith(`${field}.`),
      );
    if (!named) problems.push(`expected a 400 naming ${field}`);
  }
  return problems;
}

const describeRequest = (r: FuzzRequest) => `${r.method} ${r.url.slice(0, 140)} [${r.kind}] ${(r.body ?? '').slice(0, 160)}`;

describe('fuzzing every route of the OpenAPI document', () => {
  it('reads every documented route', () => {
    // the document must list the API, or the fuzz below would pass on nothing
    expect(routes.length).toBeGreaterThanOrEqual(25);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(['GET /v1/conversations/:id/jobs', 'POST /v1/conversations', 'PUT /v1/webhook']),
    );
  });

  it('bounds every number a request carries within the column it reaches', () => {
    // seq cursors and seqs compare with bigint columns; everything else lands in (or is summed into) int4 columns
    const SEQ_CURSORS = new Set([
      'GET /v1/conversations/:id/messages querystring.after',
      'GET /v1/batches/:id/messages querystring.after',
      'PUT /v1/conversations/:id/messages/:seq/pin path.seq',
      'DELETE /v1/conversations/:id/messages/:seq/pin path.seq',
    ]);
    const INT4_MAX = 2 ** 31 - 1;
    const unbounded: string[] = [];
    const check = (route: RouteInfo, field: string, schema: JsonSchema) => {
      const kinds = [schema['type']].flat();
      if (!kinds.includes('integer') && !kinds.includes('number')) return;
      const max = Math.min(Number(schema['maximum'] ?? Infinity), Number(schema['exclusiveMaximum'] ?? Infinity));
      const min = Math.max(Number(schema['minimum'] ?? -Infinity), Number(schema['exclusiveMinimum'] ?? -Infinity));
      const limit = SEQ_CURSORS.has(`${route.method} ${route.path} ${field}`) ? Number.MAX_SAFE_INTEGER : INT4_MAX;
      if (!(max <= limit) || !(min >= -limit)) unbounded.push(`${route.method} ${route.path} ${field}: [${min}, ${max}]`);
    };
    for (const route of routes) {
      for (const parameter of route.operation?.parameters ?? [])
        check(route, `${parameter.in === 'query' ? 'querystring' : parameter.in}.${parameter.name}`, resolve(parameter.schema));
      const schema = bodySchemaOf(route);
      for (const field of schema ? bodyFields(schema) : []) check(route, ['body', ...field.path].join('.'), field.schema);
    }
    expect(unbounded).toEqual([]);
  });

  it('answers every edge value of every parameter and body field below 500, as problem+json, refusing out-of-range values with a 400 naming the field', async () => {
    const failures: string[] = [];
    let sent = 0;
    let mustRefuse = 0;
    for (const route of routes) {
      for (const request of edgeProbes(route)) {
        const res = await send(request);
        if (!res) continue;
        sent += 1;
        if (request.mustRefuse) mustRefuse += 1;
        const problems = problemsOf(request, res);
        if (problems.length > 0)
          failures.push(`${problems.join(', ')}: ${describeRequest(request)} → ${res.status} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures.slice(0, 20), `${failures.length} failures of ${sent}`).toEqual([]);
    // the probes reached the edges the API used to get wrong
    expect(sent).toBeGreaterThan(2_000);
    expect(mustRefuse).toBeGreaterThan(500);
  }, 300_000);

  it('answers generated and mutated requests for every route below 500, as problem+json', async () => {
    // erasing the seeded conversation early would leave the later routes nothing but 404s
    const erasing = (route: RouteInfo) => route.method === 'DELETE' && route.path === '/v1/conversations/:id';
    for (const route of [...routes.filter((r) => !erasing(r)), ...routes.filter(erasing)]) {
      await fc.assert(
        fc.asyncProperty(requestArb(route, world, keys), async (request) => {
          const res = await send(request);
          if (!res) return;
          expect(problemsOf(request, res), describeRequest(request)).toEqual([]);
        }),
        { numRuns: RUNS_PER_ROUTE, seed: 26, endOnFailure: true },
      );
    }
  }, 300_000);
});
