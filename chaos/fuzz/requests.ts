import fc from 'fast-check';

import { bodySchema, type OpenApiParameter, type RouteInfo } from '../lib/routes.js';
import type { World } from '../lib/world.js';
import { edgeCases } from './edge-values.js';
import { NASTY_CONTENT_TYPES, NASTY_QUERIES, NASTY_RAW_JSON, NASTY_STRINGS, nastyValue } from './nasties.js';
import { arbitraryFor } from './schema-arb.js';

/**
 * Requests for one route, drawn by fast-check: parameters, query, headers and body from the
 * route's schemas (valid, so handlers run), mutated (a field dropped, retyped or replaced by
 * a nasty value, an unknown field added), or replaced by hand-picked hostile input.
 */

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** which generator produced it (for reports) */
  kind: string;
}

export interface FuzzKeys {
  owner: string;
  other: string;
  admin: string;
  metrics: string;
}

/** encodeURIComponent that survives lone surrogates (sent as their WTF-8 bytes: invalid UTF-8). */
export function encodeSegment(value: string): string {
  if (value.startsWith('%')) return value; // deliberately broken escapes stay as they are
  try {
    return encodeURIComponent(value);
  } catch {
    return [...value]
      .map((ch) => {
        try {
          return encodeURIComponent(ch);
        } catch {
          return '%ED%A0%80';
        }
      })
      .join('');
  }
}

const toQueryValue = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

function paramArb(name: string, route: RouteInfo, world: World): fc.Arbitrary<string> {
  const schema = route.operation?.parameters?.find((p) => p.in === 'path' && p.name === name)?.schema;
  const known = route.path.startsWith('/v1/conversations/')
    ? [world.conversationId, world.otherConversationId]
    : route.path.startsWith('/v1/jobs/')
      ? [world.jobId]
      : route.path.startsWith('/v1/batches/')
        ? [world.batchId]
        : ['compaction', 'summarize', world.jobId];
  return fc
    .oneof(
      { weight: 5, arbitrary: fc.constantFrom(...known) },
      { weight: 2, arbitrary: schema ? arbitraryFor(schema).map(toQueryValue) : fc.string() },
      { weight: 2, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
      { weight: 1, arbitrary: fc.uuid() },
    )
    .map(encodeSegment);
}

function queryArb(params: readonly OpenApiParameter[]): fc.Arbitrary<string> {
  const documented = fc
    .tuple(
      ...params.map((p) =>
        fc.option(
          fc.oneof(
            { weight: 4, arbitrary: arbitraryFor(p.schema ?? {}) },
            { weight: 1, arbitrary: nastyValue },
            // edges of the parameter's own type: dates Postgres cannot hold, numbers past a column
            { weight: 1, arbitrary: fc.constantFrom(...edgeCases(p.schema ?? {}, 'query').map((c) => c.value)) },
          ),
          { nil: undefined, freq: 2 },
        ),
      ),
    )
    .map((values) =>
      values.flatMap((v, i) =>
        v === undefined ? [] : [`${encodeURIComponent((params[i] as OpenApiParameter).name)}=${encodeSegment(toQueryValue(v))}`],
      ),
    )
    .map((pairs) => (pairs.length > 0 ? `?${pairs.join('&')}` : ''));
  return params.length === 0
    ? fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...NASTY_QUERIES) })
    : fc.oneof({ weight: 4, arbitrary: documented }, { weight: 1, arbitrary: fc.constantFrom(...NASTY_QUERIES) });
}

const TOOL_IDS = ['toolu_1', 'toolu_2', 'call_1', ''];

/** Messages in either wire format, often almost valid: roles, blocks and tool pairings that may not fit. */
export const messageArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      role: fc.constantFrom('user', 'assistant', 'system', 'tool', 'developer', 'USER', ''),
      content: fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.constantFrom(...NASTY_STRINGS),
        fc.array(
          fc.oneof(
            fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.constantFrom(...NASTY_STRINGS)) }),
            fc.record({
              type: fc.constant('tool_use'),
              id: fc.constantFrom(...TOOL_IDS),
              name: fc.string({ maxLength: 20 }),
              input: fc.jsonValue({ maxDepth: 3 }),
            }),
            fc.record(
              {
                type: fc.constant('tool_result'),
                tool_use_id: fc.constantFrom(...TOOL_IDS),
                content: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 2 })),
                is_error: fc.boolean(),
              },
              { requiredKeys: ['type', 'tool_use_id'] },
            ),
            fc.record({ type: fc.constant('image'), source: fc.jsonValue({ maxDepth: 2 }) }),
            fc.record({ type: fc.string({ maxLength: 10 }) }),
          ),
          { maxLength: 4 },
        ),
        nastyValue,
      ),
      tool_calls: fc.array(
        fc.record({
          id: fc.constantFrom(...TOOL_IDS),
          type: fc.constant('function'),
          function: fc.record({ name: fc.string(), arguments: fc.oneof(fc.string(), fc.json()) }),
        }),
        { maxLength: 2 },
      ),
      tool_call_id: fc.constantFrom(...TOOL_IDS),
      usage: fc.record({ inputTokens: fc.oneof(fc.nat(), nastyValue), outputTokens: fc.nat() }),
    },
    { requiredKeys: ['role', 'content'] },
  ),
  nastyValue,
);

function validBodyArb(route: RouteInfo): fc.Arbitrary<unknown> | null {
  const schema = bodySchema(route);
  if (!schema) return null;
  if (route.path.endsWith('/messages') && route.method === 'POST') {
    return fc.record(
      { format: fc.constantFrom('anthropic', 'openai', 'bogus'), messages: fc.array(messageArb, { minLength: 0, maxLength: 5 }) },
      { requiredKeys: ['messages'] },
    );
  }
  return arbitraryFor(schema);
}

/** One structural change to a valid body. */
function mutate(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.nat(), nastyValue, fc.string({ minLength: 1, maxLength: 12 })).map(([value, pick, nasty, extraKey]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return [value, nasty];
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const key = keys.length > 0 ? (keys[pick % keys.length] as string) : extraKey;
    switch (pick % 4) {
      case 0:
        delete copy[key];
        return copy;
      case 1:
        copy[key] = nasty;
        return copy;
      case 2:
        copy[extraKey] = nasty;
        return copy;
      default:
        return [copy];
    }
  });
}

function bodyArb(route: RouteInfo): fc.Arbitrary<{ body?: string; kind: string }> {
  const valid = validBodyArb(route);
  const raw = fc.constantFrom(...NASTY_RAW_JSON).map((body) => ({ body, kind: 'raw nasty body' }));
  if (!valid) return fc.oneof({ weight: 9, arbitrary: fc.constant({ kind: 'no body' }) }, { weight: 1, arbitrary: raw });
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((v) => ({ body: JSON.stringify(v) ?? 'null', kind: 'schema body' })) },
    { weight: 4, arbitrary: mutate(valid).map((v) => ({ body: JSON.stringify(v) ?? 'null', kind: 'mutated body' })) },
    { weight: 2, arbitrary: raw },
  );
}

function authArb(route: RouteInfo, keys: FuzzKeys): fc.Arbitrary<string | null> {
  const own = route.path.startsWith('/admin/') ? keys.admin : route.path === '/metrics' ? keys.metrics : keys.owner;
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${own}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${keys.other}`) },
    { weight: 1, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer  ',
        'Basic',
        'Basic !!!',
        'Bearer a b',
        `bearer ${own}`,
        `Basic ${Buffer.from(`x:${own}`).toString('base64')}`,
        'Token x',
      ),
    },
  );
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export function requestArb(route: RouteInfo, world: World, keys: FuzzKeys): fc.Arbitrary<FuzzRequest> {
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
  const query = (route.operation?.parameters ?? []).filter((p) => p.in === 'query');
  return fc
    .record({
      params: fc.tuple(...names.map((n) => paramArb(n, route, world))),
      query: queryArb(query),
      auth: authArb(route, keys),
      contentType: fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json') },
        { weight: 2, arbitrary: fc.constantFrom(...NASTY_CONTENT_TYPES) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
      idempotencyKey: fc.oneof(
        { weight: 6, arbitrary: fc.constant(null) },
        { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme-ascii' }) },
        { weight: 1, arbitrary: fc.constant('k'.repeat(300)) },
      ),
      body: bodyArb(route),
      method: fc.oneof({ weight: 19, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...OTHER_METHODS) }),
    })
    .map((r) => {
      let i = 0;
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, () => r.params[i++] as string).replace(/\*$/, 'x');
      const headers: Record<string, string> = {};
      if (r.auth !== null) headers['authorization'] = r.auth;
      if (r.body.body !== undefined && r.contentType !== null) headers['content-type'] = r.contentType.replace(/\u0000/g, '');
      if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey;
      return {
        method: r.method,
        url: `${path}${r.query}`,
        headers,
        ...(r.body.body === undefined ? {} : { body: r.body.body }),
        kind: r.body.kind,
      };
    });
}
