import { formatIpAddress, type IpAddress, type IpRange, isInRange, parseIpAddress, parseIpRange, range } from './ip-address.js';

/**
 * Which hosts a webhook may reach. A tenant names the URL, the service makes the request:
 * without these rules a webhook reaches the service's own network (Redis on loopback, the
 * cloud metadata address, private ranges). Pure: the shells resolve names and call
 * `checkResolvedAddresses` on every answer, both when a webhook is set and when it is
 * delivered (a DNS answer can change in between).
 */

export type AddressKind =
  'public' | 'loopback' | 'private' | 'carrier_nat' | 'link_local' | 'multicast' | 'unspecified' | 'broadcast' | 'reserved';

/** Operator exceptions (`COMPACTD_WEBHOOK_ALLOW`): host names and address ranges. */
export interface WebhookAllowList {
  hosts: string[];
  ranges: IpRange[];
}

export const EMPTY_ALLOW_LIST: WebhookAllowList = { hosts: [], ranges: [] };

// Most specific first: the first range that holds an address decides its kind.
const V4_KINDS: Array<[IpRange, AddressKind]> = [
  [range('255.255.255.255/32'), 'broadcast'],
  [range('0.0.0.0/8'), 'unspecified'],
  [range('10.0.0.0/8'), 'private'],
  [range('100.64.0.0/10'), 'carrier_nat'],
  [range('127.0.0.0/8'), 'loopback'],
  [range('169.254.0.0/16'), 'link_local'],
  [range('172.16.0.0/12'), 'private'],
  [range('192.0.0.0/24'), 'reserved'],
  [range('192.0.2.0/24'), 'reserved'],
  [range('192.88.99.0/24'), 'reserved'],
  [range('192.168.0.0/16'), 'private'],
  [range('198.18.0.0/15'), 'reserved'],
  [range('198.51.100.0/24'), 'reserved'],
  [range('203.0.113.0/24'), 'reserved'],
  [range('224.0.0.0/4'), 'multicast'],
  [range('240.0.0.0/4'), 'reserved'],
];

const V6_KINDS: Array<[IpRange, AddressKind]> = [
  [range('::/128'), 'unspecified'],
  [range('::1/128'), 'loopback'],
  [range('64:ff9b:1::/48'), 'reserved'],
  [range('100::/64'), 'reserved'],
  [range('2001::/32'), 'reserved'],
  [range('2001:db8::/32'), 'reserved'],
  [range('fc00::/7'), 'private'],
  [range('fe80::/10'), 'link_local'],
  [range('fec0::/10'), 'private'],
  [range('ff00::/8'), 'multicast'],
];

/**
 * IPv6 forms that carry an IPv4 address the packet ends up at: mapped (`::ffff:a.b.c.d`),
 * the old "compatible" form (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`).
 */
const V4_IN_LOW_BITS = [range('::ffff:0:0/96'), range('::/96'), range('64:ff9b::/96')];
const SIX_TO_FOUR = range('2002::/16');

function embeddedIpv4(ip: IpAddress): IpAddress | null {
  if (ip.version !== 6) return null;
  if (V4_IN_LOW_BITS.some((r) => isInRange(ip, r))) return { version: 4, value: ip.value & 0xffffffffn };
  if (isInRange(ip, SIX_TO_FOUR)) return { version: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return null;
}

export function classifyAddress(ip: IpAddress): AddressKind {
  if (ip.version === 6 && ip.value <= 1n) return ip.value === 0n ? 'unspecified' : 'loopback';
  const inner = embeddedIpv4(ip);
  if (inner) return classifyAddress(inner);
  for (const [kindRange, kind] of ip.version === 4 ? V4_KINDS : V6_KINDS) {
    if (isInRange(ip, kindRange)) return kind;
  }
  return 'public';
}

/** Lower case, without the trailing dot(s) a fully qualified name may carry (`localhost.`). */
export function normalizeHostname(hostname: string): string {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return bare.toLowerCase().replace(/\.+$/, '');
}

function isAllowedAddress(ip: IpAddress, allow: WebhookAllowList): boolean {
  const inner = embeddedIpv4(ip);
  return allow.ranges.some((r) => isInRange(ip, r) || (inner !== null && isInRange(inner, r)));
}

export type TargetVerdict =
  | { kind: 'allowed' }
  /** a host name: allowed when every address it resolves to is (checkResolvedAddresses) */
  | { kind: 'resolve'; hostname: string }
  | { kind: 'refused'; reason: string };

const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/** The host of a webhook URL (as `new URL(…).hostname` gives it, or any spelling), before any DNS. */
export function checkWebhookHost(hostname: string, allow: WebhookAllowList): TargetVerdict {
  const host = normalizeHostname(hostname);
  if (host === '') return { kind: 'refused', reason: 'the URL has no host' };
  if (allow.hosts.includes(host)) return { kind: 'allowed' };
  const ip = parseIpAddress(host);
  if (ip) return checkAddress(ip, allow);
  // A name whose last label is a number would be read as an address by some parser: refuse it.
  if (/^(\d+|0x[0-9a-f]*)$/i.test(host.split('.').at(-1) as string))
    return { kind: 'refused', reason: `${host} is neither a valid address nor a host name` };
  if (LOCAL_NAMES.has(host) || host.endsWith('.localhost')) return { kind: 'refused', reason: `${host} names this machine` };
  return { kind: 'resolve', hostname: host };
}

function checkAddress(ip: IpAddress, allow: WebhookAllowList): TargetVerdict {
  const kind = classifyAddress(ip);
  if (kind === 'public' || isAllowedAddress(ip, allow)) return { kind: 'allowed' };
  return { kind: 'refused', reason: `${formatIpAddress(ip)} is not a public address (${kind.replace('_', ' ')})` };
}

/** Every address a name resolved to must be allowed: one bad answer refuses the target. */
export function checkResolvedAddresses(addresses: readonly string[], allow: WebhookAllowList): TargetVerdict {
  if (addresses.length === 0) return { kind: 'refused', reason: 'the host resolved to no address' };
  for (const address of addresses) {
    const ip = parseIpAddress(address);
    if (!ip) return { kind: 'refused', reason: 'the host resolved to something that is not an address' };
    const verdict = checkAddress(ip, allow);
    if (verdict.kind === 'refused') return verdict;
  }
  return { kind: 'allowed' };
}

/**
 * `COMPACTD_WEBHOOK_ALLOW`: comma-separated host names, addresses and CIDR ranges.
 * Returns the list, or the entries that are none of those.
 */
export function parseWebhookAllowList(text: string): { ok: true; value: WebhookAllowList } | { ok: false; invalid: string[] } {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const hosts: string[] = [];
  const ranges: IpRange[] = [];
  const invalid: string[] = [];
  for (const entry of entries) {
    const asRange = parseIpRange(entry.startsWith('[') && entry.includes(']') ? entry.replace(/^\[([^\]]*)\]/, '$1') : entry);
    if (asRange) ranges.push(asRange);
    else if (/^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/i.test(entry) && !/^[\d.]+$/.test(entry))
      hosts.push(normalizeHostname(entry));
    else invalid.push(entry);
  }
  return invalid.length > 0 ? { ok: false, invalid } : { ok: true, value: { hosts, ranges } };
}

/** A name's addresses, as `dns.promises.lookup(name, { all: true })` answers; the shells inject it. */
export type HostResolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;
