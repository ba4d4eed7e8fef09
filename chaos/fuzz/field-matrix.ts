import { bodySchema, type JsonSchema, type OpenApiParameter, type RouteInfo } from '../lib/routes.js';
import { fillPath, type World } from '../lib/world.js';
import { setAt } from './edge-values.js';
import { deepArray, deepObject } from './nasties.js';
import type { FuzzKeys, FuzzRequest } from './requests.js';
import { encodeSegment } from './requests.js';
import { exampleFor } from './schema-arb.js';

/**
 * The deterministic half of the fuzzer: every string field of every route (body fields at any
 * depth, array items, free-form objects, query parameters, path parameters) × every value of
 * MATRIX_VALUES, each in an otherwise valid request aimed at tenant `chaos`'s resources. A
 * random sample can miss a field for ever (it missed `policy.systemPrompt` and webhook
 * `secret`); this cannot.
 */

/** Replaced, after JSON.stringify, by a 5,000-deep document (built as text: serializers recurse). */
const DEEP_OBJECT = '\u0001deep-object\u0001';
const DEEP_ARRAY = '\u0001deep-array\u0001';
const ONE_MB = 'x'.repeat(1024 * 1024);

export const MATRIX_VALUES: ReadonlyArray<{ name: string; value: string }> = [
  { name: 'NUL', value: '\u0000' },
  { name: 'embedded NUL', value: 'a\u0000b' },
  { name: 'lone high surrogate', value: 'x\uD800y' },
  { name: 'lone low surrogate', value: '\uDC00' },
  { name: 'reversed surrogate pair', value: '\uDC00\uD800' },
  { name: '1 MB string', value: ONE_MB },
  { name: 'deeply nested object', value: DEEP_OBJECT },
  { name: 'deeply nested array', value: DEEP_ARRAY },
  { name: 'right-to-left override', value: '\u202Eevil' },
  { name: 'byte order mark', value: '\uFEFF' },
  { name: 'noncharacters', value: '\uFFFE\uFFFF' },
  { name: 'line and paragraph separators', value: 'a\u2028b\u2029c' },
  { name: 'combining marks', value: `e${'\u0301'.repeat(500)}` },
  { name: 'emoji', value: '🙂👩‍👩‍👧'.repeat(20) },
  { name: 'dot', value: '.' },
  { name: 'dot-dot', value: '..' },
  { name: 'path traversal', value: '../../etc/passwd' },
];

interface FieldPath {
  path: Array<string | number>;
  /** a free-form object: nasty values go in as a key and as a value inside it */
  freeForm: boolean;
}

const typesOf = (schema: JsonSchema): string[] =>
  Array.isArray(schema['type']) ? (schema['type'] as string[]) : typeof schema['type'] === 'string' ? [schema['type'] as string] : [];

/** Every place in a body schema where a string (or free-form JSON) goes. */
export function stringFields(schema: JsonSchema, path: Array<string | number> = [], depth = 0): FieldPath[] {
  if (depth > 8) return [];
  const variants = (schema['anyOf'] ?? schema['oneOf'] ?? schema['allOf']) as JsonSchema[] | undefined;
  if (variants) return dedupe(variants.flatMap((v) => stringFields(v, path, depth + 1)));
  const types = typesOf(schema);
  const fields: FieldPath[] = [];
  if (types.includes('string') || (types.length === 0 && path.length > 0)) fields.push({ path, freeForm: types.length === 0 });
  if (types.includes('array')) fields.push(...stringFields((schema['items'] ?? {}) as JsonSchema, [...path, 0], depth + 1));
  if (types.includes('object')) {
    const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
    if (Object.keys(properties).length === 0) fields.push({ path, freeForm: true });
    for (const [key, child] of Object.entries(properties)) fields.push(...stringFields(child, [...path, key], depth + 1));
  }
  return fields;
}

function dedupe(fields: FieldPath[]): FieldPath[] {
  const seen = new Map<string, FieldPath>();
  for (const field of fields) seen.set(`${field.path.join('.')}|${field.freeForm}`, field);
  return [...seen.values()];
}

function serialize(body: unknown): string {
  return (JSON.stringify(body) ?? 'null')
    .replaceAll(JSON.stringify(DEEP_OBJECT), deepObject(5_000))
    .replaceAll(JSON.stringify(DEEP_ARRAY), deepArray(5_000));
}

/** Valid bodies to start from where the schema alone does not give one. */
function baseBody(route: RouteInfo, schema: JsonSchema): unknown {
  if (route.path.endsWith('/messages') && route.method === 'POST')
    return { messages: [{ role: 'user', content: 'matrix probe', name: 'probe' }] };
  if (route.method === 'PATCH') return { metadata: { probe: true } };
  return exampleFor(schema);
}

/** Extra string fields the schema leaves open (message content is `unknown` in the OpenAPI document). */
function extraFields(route: RouteInfo): FieldPath[] {
  if (route.path.endsWith('/messages') && route.method === 'POST') {
    return [
      { path: ['messages', 0, 'content'], freeForm: false },
      { path: ['messages', 0, 'name'], freeForm: false },
      { path: ['messages', 0, 'metadata'], freeForm: true },
    ];
  }
  return [];
}

function valuesFor(field: FieldPath, secretMarker: string): unknown[] {
  const name = String(field.path.at(-1) ?? '');
  // A secret carries a marker, so the log check can find it if a failure ever prints it.
  const mark = (value: string) => (/secret/i.test(name) ? `${secretMarker}${value}` : value);
  const values: unknown[] = MATRIX_VALUES.map((v) => mark(v.value));
  if (field.freeForm) {
    for (const { value } of MATRIX_VALUES)
      if (value.length < 1000 && !value.startsWith('\u0001')) values.push({ [value]: 1 }, { k: value });
    values.push({ k: ONE_MB }, { nested: DEEP_OBJECT });
  }
  return values;
}

/** Requests for one route: body fields, then query parameters, then path parameters. */
export function matrixRequests(route: RouteInfo, world: World, keys: FuzzKeys, secretMarker: string): FuzzRequest[] {
  if (!route.path.startsWith('/v1/')) return [];
  const headers = { authorization: `Bearer ${keys.owner}`, 'content-type': 'application/json' };
  const url = fillPath(route.path, world);
  const query = (route.operation?.parameters ?? []).filter((p): p is OpenApiParameter => p.in === 'query');
  const schema = bodySchema(route);
  const base = schema ? baseBody(route, schema) : undefined;
  const body = base === undefined ? {} : { body: serialize(base) };
  const requests: FuzzRequest[] = [];
  if (schema) {
    for (const field of dedupe([...stringFields(schema), ...extraFields(route)])) {
      for (const value of valuesFor(field, secretMarker)) {
        requests.push({
          method: route.method,
          url,
          headers,
          body: serialize(setAt(base, field.path, value)),
          kind: `matrix body.${field.path.join('.')}`,
        });
      }
    }
  }
  for (const parameter of query) {
    for (const { value } of MATRIX_VALUES) {
      const text = value === DEEP_OBJECT ? deepObject(200) : value === DEEP_ARRAY ? deepArray(200) : value;
      requests.push({
        method: route.method,
        url: `${url}?${encodeURIComponent(parameter.name)}=${encodeSegment(text)}`,
        headers,
        ...body,
        kind: `matrix query.${parameter.name}`,
      });
    }
  }
  const params = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
  for (const param of params) {
    for (const { value } of MATRIX_VALUES) {
      const text = value.startsWith('\u0001') ? deepObject(20) : value;
      const target = route.path.replace(`:${param}`, encodeSegment(text));
      requests.push({ method: route.method, url: fillPath(target, world), headers, ...body, kind: `matrix param.${param}` });
    }
  }
  return requests;
}
