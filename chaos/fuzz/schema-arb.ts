import fc from 'fast-check';

import type { JsonSchema } from '../lib/routes.js';

/**
 * Values from the JSON Schemas that the API's zod schemas compile to (the same documents
 * served at /docs/json): `arbitraryFor` draws values that mostly satisfy a schema, so
 * requests get past validation and reach the handlers; `exampleFor` builds the smallest
 * valid instance, deterministically.
 */

const MAX_STRING = 40;
const MAX_ITEMS = 4;

const str = (schema: JsonSchema, key: string): string | undefined =>
  typeof schema[key] === 'string' ? (schema[key] as string) : undefined;
const num = (schema: JsonSchema, key: string): number | undefined =>
  typeof schema[key] === 'number' ? (schema[key] as number) : undefined;
const types = (schema: JsonSchema): string[] =>
  Array.isArray(schema['type']) ? (schema['type'] as string[]) : typeof schema['type'] === 'string' ? [schema['type'] as string] : [];
const variants = (schema: JsonSchema): JsonSchema[] | undefined => (schema['anyOf'] ?? schema['oneOf']) as JsonSchema[] | undefined;

function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  const format = str(schema, 'format');
  const pattern = str(schema, 'pattern');
  if (format === 'uuid') return fc.uuid();
  if (format === 'date-time')
    return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (format === 'uri' || format === 'url') return fc.webUrl();
  if (pattern !== undefined) return fc.stringMatching(new RegExp(pattern), { size: 'small' });
  const minLength = num(schema, 'minLength') ?? 0;
  const maxLength = Math.max(minLength, Math.min(num(schema, 'maxLength') ?? MAX_STRING, minLength + MAX_STRING));
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength, maxLength }) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ minLength, maxLength, unit: 'binary' }) },
  );
}

function numberArb(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min =
    num(schema, 'minimum') ??
    (num(schema, 'exclusiveMinimum') !== undefined ? (num(schema, 'exclusiveMinimum') as number) + (integer ? 1 : 1e-9) : undefined);
  const max =
    num(schema, 'maximum') ??
    (num(schema, 'exclusiveMaximum') !== undefined ? (num(schema, 'exclusiveMaximum') as number) - (integer ? 1 : 1e-9) : undefined);
  if (integer)
    return fc.integer({ min: Math.max(min ?? -1e6, Number.MIN_SAFE_INTEGER), max: Math.min(max ?? 1e6, Number.MAX_SAFE_INTEGER) });
  return fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

function objectArb(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = (schema['required'] ?? []) as string[];
  const model = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, arbitraryFor(v, depth + 1)]));
  const record = fc.record(model, { requiredKeys: required.filter((k) => k in model) }) as fc.Arbitrary<Record<string, unknown>>;
  const extra = schema['additionalProperties'];
  if (Object.keys(properties).length === 0 && extra !== false) {
    const values =
      typeof extra === 'object' && extra !== null ? arbitraryFor(extra as JsonSchema, depth + 1) : fc.jsonValue({ maxDepth: 2 });
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), values, { maxKeys: 4 });
  }
  return record;
}

/** A value that mostly satisfies `schema` (bounded in size and depth). */
export function arbitraryFor(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  const options = variants(schema);
  if (options && options.length > 0) return fc.oneof(...options.map((s) => arbitraryFor(s, depth + 1)));
  const kinds = types(schema);
  if (kinds.length === 0) return fc.jsonValue({ maxDepth: 3 });
  return fc.oneof(
    ...kinds.map((kind): fc.Arbitrary<unknown> => {
      switch (kind) {
        case 'string':
          return stringArb(schema);
        case 'integer':
          return numberArb(schema, true);
        case 'number':
          return numberArb(schema, false);
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array': {
          const items = (schema['items'] ?? {}) as JsonSchema;
          const minLength = num(schema, 'minItems') ?? 0;
          return fc.array(arbitraryFor(items, depth + 1), {
            minLength,
            maxLength: Math.max(minLength, Math.min(num(schema, 'maxItems') ?? MAX_ITEMS, MAX_ITEMS)),
          });
        }
        case 'object':
          return objectArb(schema, depth);
        default:
          return fc.jsonValue({ maxDepth: 2 });
      }
    }),
  );
}

/** The smallest valid instance: required properties only, first enum value, bounds respected. */
export function exampleFor(schema: JsonSchema): unknown {
  if ('const' in schema) return schema['const'];
  if ('default' in schema) return schema['default'];
  if (Array.isArray(schema['enum'])) return (schema['enum'] as unknown[])[0];
  const options = variants(schema);
  if (options?.[0]) return exampleFor(options[0]);
  const kind = types(schema).find((t) => t !== 'null') ?? types(schema)[0];
  switch (kind) {
    case 'string': {
      const format = str(schema, 'format');
      if (format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (format === 'date-time') return '2025-01-01T00:00:00.000Z';
      if (format === 'uri' || format === 'url') return 'https://example.com/hook';
      const pattern = str(schema, 'pattern');
      if (pattern !== undefined) return fc.sample(fc.stringMatching(new RegExp(pattern)), { numRuns: 1, seed: 1 })[0];
      return 'x'.repeat(Math.max(1, num(schema, 'minLength') ?? 1));
    }
    case 'integer':
    case 'number':
      return num(schema, 'minimum') ?? (num(schema, 'exclusiveMinimum') ?? 0) + 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: num(schema, 'minItems') ?? 0 }, () => exampleFor((schema['items'] ?? {}) as JsonSchema));
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
      const required = (schema['required'] ?? []) as string[];
      return Object.fromEntries(required.filter((k) => properties[k]).map((k) => [k, exampleFor(properties[k] as JsonSchema)]));
    }
    default:
      return null;
  }
}
