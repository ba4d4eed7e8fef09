import { deepArray, deepObject, NASTY_CONTENT_TYPES, NASTY_RAW_JSON } from '../fuzz/nasties.js';
import { seededRandom } from './result.js';

/**
 * Malformed requests to the gateway's three body-taking routes (Anthropic messages and
 * count_tokens, OpenAI chat completions), each otherwise valid and authenticated: a field of
 * the provider's body given the wrong type or a hostile value, bodies that are not JSON or
 * not an object, nesting 200,000 deep, NUL bytes and lone surrogates where text goes, strings
 * of megabytes, a body past the 32 MB limit, and wrong content types. Deterministic for a seed.
 */

export type GatewayRoute = 'anthropic' | 'count_tokens' | 'openai';

export interface MalformedCase {
  name: string;
  route: GatewayRoute;
  path: string;
  contentType: string | null;
  body: string | Buffer;
}

export const ROUTE_PATHS: Record<GatewayRoute, string> = {
  anthropic: '/gateway/anthropic/v1/messages',
  count_tokens: '/gateway/anthropic/v1/messages/count_tokens',
  openai: '/gateway/openai/v1/chat/completions',
};

type Json = Record<string, unknown>;

function baseBody(route: GatewayRoute): Json {
  if (route === 'openai') return { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] };
  const body: Json = { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hello' }] };
  if (route === 'anthropic') body['max_tokens'] = 16;
  return body;
}

/** Paths into the provider's body (dot-separated; numbers index arrays) and the shapes that hold them. */
const FIELDS: Record<GatewayRoute, string[]> = {
  anthropic: [
    'model',
    'max_tokens',
    'messages',
    'messages.0',
    'messages.0.role',
    'messages.0.content',
    'messages.0.content.0',
    'messages.0.content.0.text',
    'messages.0.content.0.type',
    'system',
    'metadata',
    'metadata.user_id',
    'stream',
    'tools',
    'tools.0.input_schema',
    'tool_choice',
    'stop_sequences',
    'temperature',
  ],
  count_tokens: [
    'model',
    'messages',
    'messages.0',
    'messages.0.role',
    'messages.0.content',
    'messages.0.content.0.text',
    'system',
    'tools',
  ],
  openai: [
    'model',
    'max_tokens',
    'messages',
    'messages.0',
    'messages.0.role',
    'messages.0.content',
    'messages.0.content.0',
    'messages.0.content.0.text',
    'messages.1',
    'messages.1.tool_calls',
    'messages.1.tool_calls.0.function.arguments',
    'messages.2.content',
    'user',
    'stream',
    'tools',
    'n',
    'stop',
  ],
};

/** Bodies that give the paths above something to point at: content as blocks, a tool, and (OpenAI) a tool call and its result. */
function richBody(route: GatewayRoute): Json {
  const body = baseBody(route);
  if (route === 'openai') {
    body['messages'] = [
      { role: 'user', content: [{ type: 'text', text: 'run the tests' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
    ];
    body['tools'] = [{ type: 'function', function: { name: 'run', parameters: { type: 'object', properties: {} } } }];
    return body;
  }
  body['messages'] = [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }];
  body['tools'] = [
    { name: 'Bash', description: 'Runs a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } },
  ];
  body['system'] = 'You are an agent.';
  body['metadata'] = { user_id: 'chaos-malformed' };
  return body;
}

const NUL_TEXT = 'ELF\u0000\u0001 binary \u0000';
/** A placeholder replaced in the serialized body by a raw JSON text (nesting JSON.stringify cannot build). */
const RAW = (json: string) => ({ __raw: json });

/** Values a field gets instead of its own: wrong types, hostile strings, deep nesting, megabytes. */
function hostileValues(): Array<[string, unknown]> {
  return [
    ['null', null],
    ['true', true],
    ['0', 0],
    ['-1', -1],
    ['1e308', 1e308],
    ['a string', 'not what goes here'],
    ['empty string', ''],
    ['empty array', []],
    ['empty object', {}],
    ['array of numbers', [1, 2, 3]],
    ['array of nulls', [null, null]],
    ['object of arrays', { a: [], b: [[]] }],
    ['NUL bytes', NUL_TEXT],
    ['lone surrogates', 'x\ud800y\udfffz'],
    ['2 MB string', 'x'.repeat(2 * 1024 * 1024)],
    ['object nested 200,000 deep', RAW(deepObject(200_000))],
    ['array nested 200,000 deep', RAW(deepArray(200_000))],
  ];
}

function setAt(body: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let at: unknown = body;
  for (const part of parts.slice(0, -1)) {
    const next = (at as Record<string, unknown>)[part];
    if (typeof next !== 'object' || next === null) return;
    at = next;
  }
  (at as Record<string, unknown>)[parts.at(-1) as string] = value;
}

/** JSON text of `body` with each RAW placeholder spliced in as the raw JSON it holds. */
function serialize(body: Json): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (typeof value === 'object' && value !== null && '__raw' in value) {
      raws.push((value as { __raw: string }).__raw);
      return `\u0001RAW${raws.length - 1}\u0001`;
    }
    return value;
  });
  return text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_match, index: string) => raws[Number(index)] as string);
}

export interface MalformedOptions {
  /** fields × values: at most this many per route (drawn with the seed; every value and field at least once) */
  perRoute: number;
  seed: number;
}

/** The malformed requests, route by route. */
export function malformedCases(options: MalformedOptions): MalformedCase[] {
  const random = seededRandom(options.seed);
  const out: MalformedCase[] = [];
  const values = hostileValues();
  for (const route of ['anthropic', 'count_tokens', 'openai'] as const) {
    const path = ROUTE_PATHS[route];
    const fields = FIELDS[route];
    const pairs: Array<[string, [string, unknown]]> = fields.flatMap((field) =>
      values.map((value) => [field, value] as [string, [string, unknown]]),
    );
    // each value once and each field once first, the rest drawn
    const chosen = new Set<number>();
    values.forEach((_v, i) => chosen.add((i % fields.length) * values.length + i));
    fields.forEach((_f, i) => chosen.add(i * values.length + (i % values.length)));
    while (chosen.size < Math.min(options.perRoute, pairs.length)) chosen.add(Math.floor(random() * pairs.length));
    for (const index of [...chosen].sort((a, b) => a - b)) {
      const [field, [valueName, value]] = pairs[index] as [string, [string, unknown]];
      const body = richBody(route);
      setAt(body, field, value);
      out.push({ name: `${route}: ${field} = ${valueName}`, route, path, contentType: 'application/json', body: serialize(body) });
    }
    for (const [i, raw] of NASTY_RAW_JSON.entries())
      out.push({ name: `${route}: raw JSON #${i}`, route, path, contentType: 'application/json', body: raw });
    out.push({
      name: `${route}: invalid UTF-8`,
      route,
      path,
      contentType: 'application/json',
      body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    });
    out.push({
      name: `${route}: tool input nested 200,000 deep`,
      route,
      path,
      contentType: 'application/json',
      body: nestedToolInput(route),
    });
    out.push({
      name: `${route}: NUL everywhere text goes`,
      route,
      path,
      contentType: 'application/json',
      body: JSON.stringify(nulEverywhere(route)),
    });
    for (const [where, body] of nulCases(route))
      out.push({ name: `${route}: NUL in ${where}`, route, path, contentType: 'application/json', body: JSON.stringify(body) });
    out.push({
      name: `${route}: 5 MB message`,
      route,
      path,
      contentType: 'application/json',
      body: JSON.stringify({ ...baseBody(route), messages: [{ role: 'user', content: 'y '.repeat(2_500_000) }] }),
    });
    out.push({
      name: `${route}: 33 MB body (over the limit)`,
      route,
      path,
      contentType: 'application/json',
      body: JSON.stringify({ ...baseBody(route), messages: [{ role: 'user', content: 'z'.repeat(33 * 1024 * 1024) }] }),
    });
    for (const contentType of [...NASTY_CONTENT_TYPES.filter((t) => !t.includes('\u0000')), null]) {
      out.push({
        name: `${route}: content-type ${contentType ?? '(none)'}`,
        route,
        path,
        contentType,
        body: JSON.stringify(baseBody(route)),
      });
    }
  }
  return out;
}

function nestedToolInput(route: GatewayRoute): string {
  if (route === 'openai') {
    return serialize({
      ...baseBody(route),
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run', arguments: RAW(deepArray(200_000)) } }],
        },
      ],
    });
  }
  return serialize({
    ...baseBody(route),
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: RAW(deepObject(200_000)) }] },
    ],
  });
}

/** One NUL at a time, in each place of a tool-using history a client can put one (an id, a name, a key, JSON text inside a string). */
function nulCases(route: GatewayRoute): Array<[string, Json]> {
  const nul = 'a\u0000b';
  if (route === 'openai') {
    const history = (call: { id?: string; name?: string; args?: string }, tool = 'ok') => ({
      ...baseBody(route),
      messages: [
        { role: 'user', content: `run it (${JSON.stringify(call)})` },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: call.id ?? 'call_n', type: 'function', function: { name: call.name ?? 'run', arguments: call.args ?? '{}' } }],
        },
        { role: 'tool', tool_call_id: call.id ?? 'call_n', content: tool },
      ],
    });
    return [
      ['a tool call id', history({ id: `call_${nul}` })],
      ['a function name', history({ name: `run${nul}` })],
      ['function arguments (the JSON escape \\u0000)', history({ args: '{"path":"\\u0000"}' })],
      ['function arguments (a key)', history({ args: '{"a\\u0000":1}' })],
      ['a tool output', history({}, `out${nul}`)],
    ];
  }
  const history = (use: { id?: string; name?: string; input?: Json }, result: unknown = 'ok') => ({
    ...baseBody(route),
    messages: [
      { role: 'user', content: `run it (${JSON.stringify(use)})` },
      { role: 'assistant', content: [{ type: 'tool_use', id: use.id ?? 'toolu_n', name: use.name ?? 'Bash', input: use.input ?? {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id ?? 'toolu_n', content: result }] },
    ],
  });
  return [
    ['a tool_use id', history({ id: `toolu_${nul}` })],
    ['a tool name', history({ name: `Bash${nul}` })],
    ['a tool input value', history({ input: { command: `cat ${nul}` } })],
    ['a tool input key', history({ input: { [`k${nul}`]: 1 } })],
    ['a tool output', history({}, `out${nul}`)],
    ['a tool output block', history({}, [{ type: 'text', text: `out${nul}` }])],
  ];
}

function nulEverywhere(route: GatewayRoute): Json {
  if (route === 'openai') {
    return {
      model: 'gpt-4o-mini',
      user: `user${NUL_TEXT}`,
      messages: [
        { role: 'system', content: NUL_TEXT },
        { role: 'user', content: NUL_TEXT },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call${NUL_TEXT}`, type: 'function', function: { name: 'run', arguments: `{"a":"${'\\u0000'}"}` } }],
        },
        { role: 'tool', tool_call_id: `call${NUL_TEXT}`, content: NUL_TEXT },
      ],
    };
  }
  return {
    ...baseBody(route),
    system: NUL_TEXT,
    metadata: route === 'anthropic' ? { user_id: `user${NUL_TEXT}` } : undefined,
    messages: [
      { role: 'user', content: NUL_TEXT },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_nul', name: `Bash${NUL_TEXT}`, input: { command: NUL_TEXT } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_nul', content: NUL_TEXT }] },
    ],
  };
}

/** Whether an error body is in the route's provider shape (Anthropic `{type: 'error', error: {type, message}}`, OpenAI `{error: {message, type}}`). */
export function inProviderShape(route: GatewayRoute, text: string): boolean {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  const error = (body as { error?: { type?: unknown; message?: unknown } } | null)?.error;
  if (typeof error !== 'object' || error === null || typeof error.message !== 'string') return false;
  return route === 'openai' ? true : (body as { type?: unknown }).type === 'error' && typeof error.type === 'string';
}
