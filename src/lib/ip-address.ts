/**
 * IP addresses as numbers, parsed the way a URL's host is read (WHATWG URL host parser),
 * so that every spelling a client or a resolver accepts — `2130706433`, `0x7f.1`,
 * `0177.0.0.1`, `127.1`, `[::ffff:7f00:1]` — ends up as the one address it names.
 * Pure: no `node:net` (lib/ has no I/O modules), which is why the parsing is done here.
 */

export interface IpAddress {
  version: 4 | 6;
  /** the address as an unsigned integer (32 or 128 bits) */
  value: bigint;
}

export interface IpRange {
  version: 4 | 6;
  base: bigint;
  prefixLength: number;
}

const V4_BITS = 32;
const V6_BITS = 128;

/** One dotted part: `0x…` is hex, a leading `0` octal, else decimal (WHATWG "IPv4 number parser"). */
function parseIpv4Number(part: string): bigint | null {
  if (part === '') return null;
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0n : BigInt(part);
  if (/^0[0-7]+$/.test(part)) return BigInt(`0o${part.slice(1)}`);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return BigInt(part);
  return null;
}

/**
 * An IPv4 host in any form a URL accepts: 1 to 4 parts, each decimal, octal or hex, the last
 * filling the remaining bytes; one trailing dot allowed. Null when it is not an IPv4 host.
 */
export function parseIpv4(host: string): bigint | null {
  const parts = host.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const numbers = parts.map(parseIpv4Number);
  if (numbers.some((n) => n === null)) return null;
  const values = numbers as bigint[];
  const last = values.at(-1) as bigint;
  const leading = values.slice(0, -1);
  if (leading.some((n) => n > 255n)) return null;
  const lastBits = BigInt(8 * (5 - values.length));
  if (last >= 1n << lastBits) return null;
  return leading.reduce((acc, n, i) => acc | (n << BigInt(8 * (3 - i))), 0n) | last;
}

/** Strict dotted quad, as the tail of an IPv6 address must be (`::ffff:127.0.0.1`). */
function parseDottedQuad(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
}

/** Hex groups of one side of `::`, the last of which may be a dotted quad (two groups). */
function parseGroups(text: string, allowQuad: boolean): bigint[] | null {
  if (text === '') return [];
  const pieces = text.split(':');
  const groups: bigint[] = [];
  for (const [i, piece] of pieces.entries()) {
    if (allowQuad && i === pieces.length - 1 && piece.includes('.')) {
      const quad = parseDottedQuad(piece);
      if (quad === null) return null;
      groups.push(quad >> 16n, quad & 0xffffn);
    } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
      groups.push(BigInt(`0x${piece}`));
    } else {
      return null;
    }
  }
  return groups;
}

/** An IPv6 address, with or without brackets; zone ids (`%eth0`) are not accepted. */
export function parseIpv6(host: string): bigint | null {
  const text = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!text.includes(':')) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseGroups(halves[0] as string, halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1] as string, true) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<bigint>(halves.length === 2 ? missing : 0).fill(0n), ...tail];
  return groups.reduce((acc, g) => (acc << 16n) | g, 0n);
}

/** An address literal of either family (a URL host or a resolver's answer), else null. */
export function parseIpAddress(host: string): IpAddress | null {
  const v6 = parseIpv6(host);
  if (v6 !== null) return { version: 6, value: v6 };
  const v4 = parseIpv4(host);
  return v4 === null ? null : { version: 4, value: v4 };
}

export function formatIpAddress(ip: IpAddress): string {
  if (ip.version === 4) return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((ip.value >> BigInt(16 * (7 - i))) & 0xffffn).toString(16));
  return groups.join(':');
}

/** `10.0.0.0/8`, `fd00::/8`, or one address (a /32 or /128). Null when malformed. */
export function parseIpRange(text: string): IpRange | null {
  const [addressText, prefixText, ...rest] = text.split('/');
  if (rest.length > 0 || addressText === undefined) return null;
  const ip = parseIpv6(addressText) !== null ? parseIpAddress(addressText) : parseStrictIpv4(addressText);
  if (!ip) return null;
  const bits = ip.version === 4 ? V4_BITS : V6_BITS;
  if (prefixText !== undefined && !/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return null;
  const prefixLength = prefixText === undefined ? bits : Number(prefixText);
  if (prefixLength > bits) return null;
  return { version: ip.version, base: ip.value & mask(bits, prefixLength), prefixLength };
}

/** Operators write ranges as dotted quads; the odd URL spellings are not accepted there. */
function parseStrictIpv4(text: string): IpAddress | null {
  const value = parseDottedQuad(text);
  return value === null ? null : { version: 4, value };
}

function mask(bits: number, prefixLength: number): bigint {
  const all = (1n << BigInt(bits)) - 1n;
  return all ^ ((1n << BigInt(bits - prefixLength)) - 1n);
}

export function isInRange(ip: IpAddress, range: IpRange): boolean {
  if (ip.version !== range.version) return false;
  return (ip.value & mask(ip.version === 4 ? V4_BITS : V6_BITS, range.prefixLength)) === range.base;
}

/** Shorthand for the tables of special ranges. */
export function range(text: string): IpRange {
  const parsed = parseIpRange(text);
  if (!parsed) throw new Error(`not an IP range: ${text}`);
  return parsed;
}
