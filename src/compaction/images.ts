import { createHash } from 'node:crypto';

import type { ImageBlock } from './types.js';

/**
 * What an image is, read from its block alone (SPEC §5.6c): the summarizer, the state ledger and
 * the recall index name an image by a described reference instead of `[image]`, so that the
 * context can say which screenshot the user sent and the agent can fetch it back from the
 * archive. The reference's id is the first 12 hex digits of the SHA-256 of the image's bytes
 * (of its URL when it is given by URL), the same in every part that names it.
 */

export interface ImageFacts {
  /** `img:` and 12 hex digits: what recall finds the archived original by */
  ref: string;
  mediaType: string | null;
  /** decoded size; null for an image given by URL */
  bytes: number | null;
  width: number | null;
  height: number | null;
  /** the last path segment of its URL, or the `name`/`filename` a client gave it */
  name: string | null;
}

const REF_HEX = 12;

/** The facts of one image block; never throws, whatever its source holds. */
export function imageFacts(block: ImageBlock): ImageFacts {
  const source = block.source;
  const given = label(stringField(source, 'name') ?? stringField(source, 'filename'));
  const data = stringField(source, 'data');
  if (data !== null) {
    const bytes = Buffer.from(data, 'base64');
    const size = imageSize(bytes);
    return {
      ref: refOf(bytes),
      mediaType: label(stringField(source, 'media_type')) ?? size?.mediaType ?? null,
      bytes: bytes.length,
      width: size?.width ?? null,
      height: size?.height ?? null,
      name: given,
    };
  }
  const url = stringField(source, 'url') ?? '';
  // data:[<media type>][;<parameter>…][;base64],<data>
  const inline = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/s.exec(url);
  if (inline) {
    const bytes = inline[3] ? Buffer.from(inline[4] ?? '', 'base64') : Buffer.from(percentDecoded(inline[4] ?? ''), 'utf8');
    const size = imageSize(bytes);
    return {
      ref: refOf(bytes),
      mediaType: label(inline[1] ?? null) ?? size?.mediaType ?? null,
      bytes: bytes.length,
      width: size?.width ?? null,
      height: size?.height ?? null,
      name: given,
    };
  }
  return {
    ref: refOf(Buffer.from(url, 'utf8')),
    mediaType: null,
    bytes: null,
    width: null,
    height: null,
    name: given ?? label(lastSegment(url)),
  };
}

/** `[image img:ab12cd34ef56: screenshot.png, image/png, 1280×800, 34 KB]`: what stands for the image in text. */
export function imageReference(facts: ImageFacts): string {
  return `[image ${facts.ref}${describe(facts) === '' ? '' : `: ${describe(facts)}`}]`;
}

/** The description alone: name, media type, size in pixels and in bytes, as far as they are known. */
export function describe(facts: ImageFacts): string {
  const parts: string[] = [];
  if (facts.name !== null) parts.push(facts.name);
  if (facts.mediaType !== null) parts.push(facts.mediaType);
  if (facts.width !== null && facts.height !== null) parts.push(`${facts.width}×${facts.height}`);
  if (facts.bytes !== null) parts.push(formatBytes(facts.bytes));
  return parts.join(', ');
}

function refOf(bytes: Buffer): string {
  return `img:${createHash('sha256').update(bytes).digest('hex').slice(0, REF_HEX)}`;
}

/** A data URL's text as written: percent-escapes decoded where they are valid, kept as they are where not. */
function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const MAX_LABEL_CHARS = 120;

/**
 * A client-given name or media type as it may appear in a reference: one line, no brackets
 * (a name cannot close the reference or open a marker of its own), capped.
 */
function label(text: string | null): string | null {
  if (text === null) return null;
  const clean = text
    .replace(/[\s\u0000-\u001f\u007f]+/g, ' ')
    .replace(/[[\]]/g, '')
    .trim();
  if (clean === '') return null;
  return clean.length > MAX_LABEL_CHARS ? `${clean.slice(0, MAX_LABEL_CHARS - 1)}…` : clean;
}

function stringField(source: Record<string, unknown>, key: string): string | null {
  const value = source[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

function lastSegment(url: string): string | null {
  const path = url.split(/[?#]/)[0] ?? '';
  const segment = path.slice(path.lastIndexOf('/') + 1);
  return segment === '' || segment.length > MAX_LABEL_CHARS ? null : segment;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

interface ImageSize {
  mediaType: string;
  width: number;
  height: number;
}

/** Width and height from the header of a PNG, GIF, JPEG or WebP file; null for anything else. */
export function imageSize(bytes: Buffer): ImageSize | null {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.toString('ascii', 12, 16) === 'IHDR')
    return { mediaType: 'image/png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 10 && /^GIF8[79]a$/.test(bytes.toString('ascii', 0, 6)))
    return { mediaType: 'image/gif', width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegSize(bytes);
  if (bytes.length >= 30 && bytes.toString('ascii', 0, 4) === 'RIFF' && bytes.toString('ascii', 8, 12) === 'WEBP') return webpSize(bytes);
  return null;
}

/** A JPEG's size from its first start-of-frame segment (SOF0–SOF15 but DHT, JPG and DAC). */
function jpegSize(bytes: Buffer): ImageSize | null {
  let at = 2;
  while (at + 9 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { mediaType: 'image/jpeg', height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    if (length < 2) return null;
    at += 2 + length;
  }
  return null;
}

/** A WebP's size from its first chunk: lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webpSize(bytes: Buffer): ImageSize | null {
  const chunk = bytes.toString('ascii', 12, 16);
  if (chunk === 'VP8X') return { mediaType: 'image/webp', width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
  if (chunk === 'VP8L') {
    const bits = bytes.readUInt32LE(21);
    return { mediaType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ') return { mediaType: 'image/webp', width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  return null;
}
