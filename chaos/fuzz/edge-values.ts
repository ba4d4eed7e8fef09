import type { JsonSchema } from '../lib/routes.js';

/**
 * Values at and past the edges of a field's declared type, derived from its JSON Schema (the
 * OpenAPI document the zod schemas compile to): numbers around the declared bounds and past
 * every column width (int4, int8, doubles), dates the ISO format admits but Postgres cannot
 * hold, strings that are not numbers, wrong types, prototype keys. Shared by the chaos fuzzer
 * and the fuzz test of `npm test`.
 *
 * Where the schema alone decides, a case says whether the API must accept it (`valid`), so a
 * test can demand a 400 that names the field rather than only "not a 5xx".
 */

export interface EdgeCase {
  name: string;
  /** a JSON value for a body field; a string for a path, query or header value */
  value: unknown;
  /** true: the schema accepts it; false: it must be refused (400 naming the field); undefined: not decided here */
  valid?: boolean;
}

export type FieldLocation = 'body' | 'query' | 'path' | 'header';

const types = (schema: JsonSchema): string[] =>
  Array.isArray(schema['type']) ? (schema['type'] as string[]) : typeof schema['type'] === 'string' ? [schema['type'] as string] : [];
const num = (schema: JsonSchema, key: string): number | undefined =>
  typeof schema[key] === 'number' ? (schema[key] as number) : undefined;

/** Numbers a number field meets in the wild: column widths, double limits, the declared bounds ± 1. */
function numberCandidates(schema: JsonSchema): number[] {
  const bounds = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].flatMap((key) => {
    const bound = num(schema, key);
    return bound === undefined ? [] : [bound - 1, bound, bound + 1, bound + 0.5];
  });
  return [
    ...bounds,
    0,
    -1,
    0.5,
    5e-324,
    // past int4, past the doubles that are exact integers, past int8, past every double but infinity
    2 ** 31,
    Number.MAX_SAFE_INTEGER + 2,
    2 ** 63,
    1e308,
    -1e308,
  ];
}

/** Whether a number meets the schema (the checks zod compiled into it). */
function numberValid(schema: JsonSchema, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (types(schema).includes('integer') && !types(schema).includes('number') && !Number.isSafeInteger(value)) return false;
  const min = num(schema, 'minimum');
  const max = num(schema, 'maximum');
  const xmin = num(schema, 'exclusiveMinimum');
  const xmax = num(schema, 'exclusiveMaximum');
  return (
    (min === undefined || value >= min) &&
    (max === undefined || value <= max) &&
    (xmin === undefined || value > xmin) &&
    (xmax === undefined || value < xmax)
  );
}

/** Number-like texts for a query or path value, and what `Number()` (zod's coercion) makes of them. */
const NUMBER_TEXTS: readonly string[] = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '-1e999',
  '0x10',
  '0b11',
  '0o7',
  '1_000',
  '+1',
  '-0',
  '1.',
  '.5',
  '1e3',
  '1 2',
  '١٢',
  '１２',
  '9223372036854775808',
  '-9223372036854775809',
  '99999999999999999999999999',
  '2147483648',
  '4294967296',
  '1e308',
  '2e308',
];

/** Dates: what the ISO format admits and Postgres' `timestamptz` does not, and the extremes both hold. */
export const EDGE_DATES: ReadonlyArray<{ value: string; valid: boolean }> = [
  { value: '0000-01-01T00:00:00Z', valid: false },
  { value: '0000-12-31T23:59:59.999Z', valid: false },
  { value: '0001-01-01T00:00:00Z', valid: true },
  { value: '1970-01-01T00:00:00Z', valid: true },
  { value: '9999-12-31T23:59:59.999Z', valid: true },
  { value: '2025-01-01T00:00:00.123456789Z', valid: true },
  { value: '+275760-09-13T00:00:00.000Z', valid: false },
  { value: '-271821-04-20T00:00:00.000Z', valid: false },
  { value: '294277-01-01T00:00:00Z', valid: false },
  { value: '-004713-11-24T00:00:00Z', valid: false },
  { value: '10000-01-01T00:00:00Z', valid: false },
  { value: '2025-02-29T00:00:00Z', valid: false },
  { value: '2025-01-01T24:00:00Z', valid: false },
  { value: '2025-01-01T23:59:60Z', valid: false },
  { value: '2025-01-01T00:00:00+14:00', valid: false },
  { value: '2025-01-01', valid: false },
  { value: '1e999', valid: false },
  { value: 'infinity', valid: false },
  { value: '-infinity', valid: false },
  { value: 'epoch', valid: false },
  { value: 'now', valid: false },
  { value: 'allballs', valid: false },
];

/** Values of another JSON type than the field's (arrays for scalars, objects, prototype keys). */
const WRONG_TYPES: readonly EdgeCase[] = [
  { name: 'null', value: null },
  { name: 'true', value: true },
  { name: 'array', value: [1] },
  { name: 'empty array', value: [] },
  { name: 'object', value: { a: 1 } },
];

/** Refused by the JSON parser as a whole (400 MALFORMED_JSON), before any field is looked at. */
const PROTOTYPE_KEYS: readonly EdgeCase[] = [
  { name: '__proto__ object', value: JSON.parse('{"__proto__":{"polluted":true}}') as unknown },
  { name: 'constructor.prototype object', value: { constructor: { prototype: { polluted: true } } } },
];

/** A few hostile strings per field (the chaos field matrix sends every string field all of them). */
const STRINGS: readonly EdgeCase[] = [
  { name: 'empty string', value: '' },
  { name: 'NUL', value: 'a\u0000b' },
  { name: 'lone surrogate', value: 'x\uD800y' },
  { name: 'digits past int8', value: '9'.repeat(400) },
  { name: 'NaN text', value: 'NaN' },
  { name: 'right-to-left override', value: '\u202Eevil' },
  { name: 'SQL quote', value: "' or 1=1 --" },
  { name: 'path traversal', value: '../../etc/passwd' },
  { name: '100 KB string', value: 'x'.repeat(100_000) },
];

/** Markers `bodyFields` leaves on a variant of a union. */
const NULLABLE = 'x-fuzz-nullable';
const UNDECIDED = 'x-fuzz-undecided';

/** Whether a schema is a number, integer or date-time string (the kinds with decidable edges). */
function kindOf(schema: JsonSchema): 'number' | 'integer' | 'date-time' | 'other' {
  const kinds = types(schema);
  if (kinds.includes('number')) return 'number';
  if (kinds.includes('integer')) return 'integer';
  if (kinds.includes('string') && schema['format'] === 'date-time') return 'date-time';
  return 'other';
}

/** Every edge case for a field of this schema at this location (strings for everything but bodies). */
export function edgeCases(schema: JsonSchema, location: FieldLocation): EdgeCase[] {
  const cases = typedEdgeCases(schema, location);
  const allowed = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : 'const' in schema ? [schema['const']] : null;
  return cases.map((c) => {
    if (schema[UNDECIDED] === true || PROTOTYPE_KEYS.includes(c)) return { name: c.name, value: c.value };
    if (c.value === null && schema[NULLABLE] === true) return { ...c, valid: true };
    if (allowed && location === 'body' && !allowed.includes(c.value)) return { ...c, valid: false };
    return c;
  });
}

function typedEdgeCases(schema: JsonSchema, location: FieldLocation): EdgeCase[] {
  const kind = kindOf(schema);
  const cases: EdgeCase[] = [];
  if (kind === 'number' || kind === 'integer') {
    for (const n of numberCandidates(schema)) {
      cases.push({ name: `number ${n}`, value: location === 'body' ? n : String(n), valid: numberValid(schema, n) });
    }
    if (location === 'body') {
      cases.push({ name: 'numeric string', value: '1', valid: false });
    } else {
      // a query or path value is coerced by Number(): '' and ' ' are 0, '0x10' is 16
      for (const text of NUMBER_TEXTS)
        cases.push({
          name: `text ${JSON.stringify(text)}`,
          value: text,
          valid: text.trim() === '' ? numberValid(schema, 0) : numberValid(schema, Number(text)),
        });
      cases.push({ name: 'large decimal', value: `${String(num(schema, 'maximum') ?? 1)}.000000000000000001` });
    }
  }
  if (kind === 'date-time') {
    for (const date of EDGE_DATES) cases.push({ name: `date ${date.value}`, value: date.value, valid: date.valid });
  }
  if (location === 'body') {
    // a wrong type is refused unless the schema admits it (a nullable field takes null)
    for (const wrong of WRONG_TYPES)
      cases.push({ ...wrong, ...(kind === 'other' ? {} : { valid: wrong.value === null && types(schema).includes('null') }) });
    for (const text of kind === 'other' ? STRINGS : STRINGS.slice(0, 5)) cases.push(kind === 'other' ? text : { ...text, valid: false });
    cases.push(...PROTOTYPE_KEYS);
  } else {
    for (const text of STRINGS) cases.push(text);
  }
  return cases;
}

export interface BodyField {
  path: Array<string | number>;
  schema: JsonSchema;
}

/** Every field of a body schema, at any depth (array items at index 0), objects and leaves alike. */
export function bodyFields(schema: JsonSchema, path: Array<string | number> = [], depth = 0): BodyField[] {
  if (depth > 8) return [];
  const variants = (schema['anyOf'] ?? schema['oneOf'] ?? schema['allOf']) as JsonSchema[] | undefined;
  if (variants) {
    // `x | null` is one field that also takes null; a union of several shapes is left undecided
    const nonNull = variants.filter((v) => !(types(v).length === 1 && types(v)[0] === 'null'));
    if (nonNull.length === 1)
      return bodyFields(
        { ...(nonNull[0] as JsonSchema), ...(nonNull.length < variants.length ? { [NULLABLE]: true } : {}) },
        path,
        depth + 1,
      );
    return variants.flatMap((v) => bodyFields({ ...v, [UNDECIDED]: true }, path, depth + 1));
  }
  const fields: BodyField[] = path.length > 0 ? [{ path, schema }] : [];
  const kinds = types(schema);
  if (kinds.includes('array')) fields.push(...bodyFields((schema['items'] ?? {}) as JsonSchema, [...path, 0], depth + 1));
  if (kinds.includes('object')) {
    for (const [key, child] of Object.entries((schema['properties'] ?? {}) as Record<string, JsonSchema>))
      fields.push(...bodyFields(child, [...path, key], depth + 1));
  }
  return fields;
}

/** A copy of `target` with `value` at `path` (objects and arrays created on the way). */
export function setAt(target: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  const copy: unknown = Array.isArray(target)
    ? [...target]
    : typeof target === 'object' && target !== null
      ? { ...target }
      : typeof head === 'number'
        ? []
        : {};
  const container = copy as Record<string | number, unknown>;
  container[head] = setAt(container[head], rest, value);
  return container;
}
