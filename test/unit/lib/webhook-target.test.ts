import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { formatIpAddress, parseIpAddress, parseIpRange } from '../../../src/lib/ip-address.js';
import {
  checkResolvedAddresses,
  checkWebhookHost,
  classifyAddress,
  EMPTY_ALLOW_LIST,
  parseWebhookAllowList,
  type WebhookAllowList,
} from '../../../src/lib/webhook-target.js';

const kindOf = (text: string) => classifyAddress(parseIpAddress(text)!);
/** The host as a request would see it: through the WHATWG URL parser, as the worker reads it. */
const urlHost = (url: string) => new URL(url).hostname;
const allowList = (text: string): WebhookAllowList => {
  const parsed = parseWebhookAllowList(text);
  if (!parsed.ok) throw new Error(parsed.invalid.join());
  return parsed.value;
};

describe('parseIpAddress: every spelling names one address', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0177.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0x', '0.0.0.0'],
    ['0xA9.0xFE.0xA9.0xFE', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['[::1]', '0:0:0:0:0:0:0:1'],
    ['::ffff:127.0.0.1', '0:0:0:0:0:ffff:7f00:1'],
    ['[::FFFF:7F00:1]', '0:0:0:0:0:ffff:7f00:1'],
    ['1::', '1:0:0:0:0:0:0:0'],
    ['fe80::1:2', 'fe80:0:0:0:0:0:1:2'],
  ])('%s is %s', (spelling, canonical) => {
    expect(formatIpAddress(parseIpAddress(spelling)!)).toBe(canonical);
  });

  it.each([
    'localhost',
    'example.com',
    '256.1.1.1',
    '1.2.3.4.5',
    '08.1.1.1',
    '1..1',
    '::1::',
    ':::',
    '1:2:3:4:5:6:7:8:9',
    'fe80::1%eth0',
    '::ffff:1.2.3.256',
    '',
  ])('%j is not an address', (text) => expect(parseIpAddress(text)).toBeNull());

  it('agrees with the URL parser on random IPv4 spellings (property)', () => {
    const part = (max: number) =>
      fc
        .tuple(fc.integer({ min: 0, max }), fc.constantFrom('dec', 'hex', 'oct'))
        .map(([n, base]) => (base === 'hex' ? `0x${n.toString(16)}` : base === 'oct' ? `0${n.toString(8)}` : String(n)));
    const spelled = fc.oneof(
      fc.tuple(part(0xffffffff)).map((p) => p),
      fc.tuple(part(255), part(0xffffff)),
      fc.tuple(part(255), part(255), part(0xffff)),
      fc.tuple(part(255), part(255), part(255), part(255)),
    );
    fc.assert(
      fc.property(spelled, (parts) => {
        const host = parts.join('.');
        expect(formatIpAddress(parseIpAddress(host)!)).toBe(new URL(`http://${host}/`).hostname);
      }),
      { numRuns: 500 },
    );
  });
});

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['100.64.0.1', 'carrier_nat'],
    ['100.127.255.255', 'carrier_nat'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['febf::1', 'link_local'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['2002:c0a8:0101::1', 'private'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(kindOf(address)).toBe(kind);
  });

  it('classifies an IPv4-mapped IPv6 address like the IPv4 address it carries (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const v4 = formatIpAddress({ version: 4, value: BigInt(n) });
        expect(kindOf(`::ffff:${v4}`)).toBe(kindOf(v4));
      }),
      { numRuns: 500 },
    );
  });
});

describe('checkWebhookHost', () => {
  it.each([
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://0xa9fea9fe/',
    'http://localhost:6379/',
    'http://LOCALHOST./',
    'http://localhost../',
    'http://redis.localhost/',
    'http://a.b.localhost./',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://10.0.0.1:8080/',
    'http://100.64.0.1/',
    'http://192.168.0.1/',
    'http://224.0.0.1/',
    'http://0/',
    'http://0.0.0.0/',
    'http://255.255.255.255/',
    'http://[::]/',
  ])('refuses %s', (url) => {
    expect(checkWebhookHost(urlHost(url), EMPTY_ALLOW_LIST).kind).toBe('refused');
  });

  it.each(['127.0.0.1', '2130706433', '0x7f.1', '127.1', '[::1]', 'localhost', 'LocalHost.', 'db.localhost', '1.2.3.300', 'x.123'])(
    'refuses the raw spelling %s too (no URL parser in front)',
    (host) => expect(checkWebhookHost(host, EMPTY_ALLOW_LIST).kind).toBe('refused'),
  );

  it('lets public addresses through and leaves names to resolution', () => {
    expect(checkWebhookHost(urlHost('https://8.8.8.8/'), EMPTY_ALLOW_LIST)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost(urlHost('https://[2606:4700::1111]/'), EMPTY_ALLOW_LIST)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost(urlHost('https://Hooks.Example.com./x'), EMPTY_ALLOW_LIST)).toEqual({
      kind: 'resolve',
      hostname: 'hooks.example.com',
    });
  });

  it('follows the operator allow-list: names, single addresses, ranges (also through mapped IPv6)', () => {
    const allow = allowList('localhost,hooks.internal,127.0.0.1,10.0.0.0/8,fd00::/8');
    expect(checkWebhookHost('localhost.', allow)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost('hooks.internal', allow)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost(urlHost('http://2130706433/'), allow)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost(urlHost('http://[::ffff:10.9.8.7]/'), allow)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost('[fd00::5]', allow)).toEqual({ kind: 'allowed' });
    expect(checkWebhookHost('127.0.0.2', allow).kind).toBe('refused');
    expect(checkWebhookHost('redis.localhost', allow).kind).toBe('refused');
    expect(checkWebhookHost('169.254.169.254', allow).kind).toBe('refused');
  });
});

describe('checkResolvedAddresses', () => {
  it('refuses when any one address is not public, or when there is none', () => {
    expect(checkResolvedAddresses(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'], EMPTY_ALLOW_LIST)).toEqual({
      kind: 'allowed',
    });
    expect(checkResolvedAddresses(['93.184.215.14', '127.0.0.1'], EMPTY_ALLOW_LIST).kind).toBe('refused');
    expect(checkResolvedAddresses(['::ffff:192.168.0.10'], EMPTY_ALLOW_LIST).kind).toBe('refused');
    expect(checkResolvedAddresses([], EMPTY_ALLOW_LIST).kind).toBe('refused');
    expect(checkResolvedAddresses(['not-an-address'], EMPTY_ALLOW_LIST).kind).toBe('refused');
    expect(checkResolvedAddresses(['127.0.0.1', '10.1.1.1'], allowList('127.0.0.0/8,10.0.0.0/8'))).toEqual({ kind: 'allowed' });
  });
});

describe('parseWebhookAllowList / parseIpRange', () => {
  it('rejects entries that are neither names, addresses nor ranges', () => {
    expect(parseWebhookAllowList('ok.example, bad name, 10.0.0.0/40, 1.2.3, http://x')).toEqual({
      ok: false,
      invalid: ['bad name', '10.0.0.0/40', '1.2.3', 'http://x'],
    });
    expect(parseWebhookAllowList(' , ')).toEqual({ ok: true, value: { hosts: [], ranges: [] } });
  });

  it('normalizes a range to its network', () => {
    expect(parseIpRange('10.1.2.3/8')).toEqual({ version: 4, base: 0x0a000000n, prefixLength: 8 });
    expect(parseIpRange('0177.0.0.1')).toBeNull();
  });
});
