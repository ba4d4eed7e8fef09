import { createHash } from 'node:crypto';

/**
 * Prompt caching as the providers price it.
 *
 * Anthropic: a `cache_control: {type: "ephemeral"}` breakpoint (at most 4 per request, on tool
 * definitions, system blocks or message content blocks; or the top-level `cache_control`, which
 * marks the last block) caches the prefix up to and including its block, hashed in the order
 * tools → system → messages. A breakpoint whose prefix is at least the model's minimum
 * cacheable length is written on a miss (`cache_creation_input_tokens`) and read by a later
 * request with the same prefix (`cache_read_input_tokens`); `input_tokens` is what is left.
 * Lookback: a request also reads a prefix cached at any block boundary up to 20 blocks before
 * each of its breakpoints; the longest one found wins.
 *
 * OpenAI (chat completions and Responses): automatic. A prompt of at least 1,024 tokens
 * caches its prefixes at every message boundary; a later prompt reads the longest cached one
 * it starts with, counted in 128-token increments (`cached_tokens`, included in
 * `prompt_tokens` / `input_tokens`). OpenAI reports no cache writes.
 *
 * Entries live per API key (an organization) and model, for a TTL (5 minutes by default)
 * refreshed by every hit; `ttl: "1h"` on an Anthropic breakpoint keeps its entry an hour. A new
 * entry is readable once the response that writes it has begun (its first token), as Anthropic
 * documents: parallel requests sent together all miss and all pay the write.
 * Tokens are the sim's own count (a message is its text's tokens + 4); tool definitions are
 * hashed into the prefix but, as everywhere in the sim, count no tokens.
 */

export interface Breakpoint {
  ttl: '5m' | '1h';
}

export interface LayoutBlock {
  /** what identifies the block in the prefix (its canonical JSON, without cache_control) */
  key: string;
  /** the text it counts for: a message's block texts joined by newlines are its content */
  text: string;
  breakpoint: Breakpoint | null;
}

export interface PromptLayout {
  scheme: 'anthropic' | 'openai';
  tools: Array<{ key: string; breakpoint: Breakpoint | null }>;
  /** one per SimRequest message, system first */
  messages: Array<{ blocks: LayoutBlock[] }>;
}

/**
 * Minimum cacheable prefix per model, first match wins: a shorter prefix is never cached.
 * Anthropic's Haiku-class models need 2,048 tokens, its Sonnet- and Opus-class ones 1,024;
 * OpenAI caches prompts of 1,024 tokens and more whatever the model.
 */
export const MIN_CACHEABLE_TOKENS: ReadonlyArray<{ model: RegExp; tokens: number }> = [
  { model: /haiku/i, tokens: 2_048 },
  { model: /sonnet|opus|claude/i, tokens: 1_024 },
  { model: /./, tokens: 1_024 },
];

export function minCacheableTokens(model: string): number {
  return MIN_CACHEABLE_TOKENS.find((row) => row.model.test(model))?.tokens ?? 1_024;
}

/** Anthropic's lookback: block boundaries checked before each breakpoint, the breakpoint's own included. */
export const LOOKBACK_BLOCKS = 20;
/** OpenAI counts cached tokens in increments of this many. */
export const OPENAI_CACHE_INCREMENT = 128;
export const ONE_HOUR_MS = 3_600_000;
const ENTRY_LIMIT = 500_000;

interface Entry {
  tokens: number;
  ttlMs: number;
  expiresAt: number;
  /** when a read may find it: the writing response's first token (Infinity until that is known) */
  availableAt: number;
}

/** The entries of one sim: prefix hash → cached length, expiring `ttlMs` after the last write or hit. */
export class PromptCacheStore {
  private readonly entries = new Map<string, Entry>();

  /** The readable entry under `key` (an expired one is dropped; one still being written is not found). */
  get(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.availableAt <= now ? entry : undefined;
  }

  /**
   * Writes or refreshes an entry; the oldest go first past the limit. Returns true when the
   * write is new (no live entry was there): it is readable only once `publish`ed.
   */
  put(key: string, tokens: number, ttlMs: number, now: number): boolean {
    const previous = this.entries.get(key);
    this.entries.delete(key);
    const live = previous !== undefined && previous.expiresAt > now;
    const keep = live ? Math.max(previous.ttlMs, ttlMs) : ttlMs;
    this.entries.set(key, { tokens, ttlMs: keep, expiresAt: now + keep, availableAt: live ? previous.availableAt : Infinity });
    if (this.entries.size > ENTRY_LIMIT) {
      for (const [stale, entry] of this.entries) {
        if (this.entries.size <= ENTRY_LIMIT * 0.9 && entry.expiresAt > now) break;
        this.entries.delete(stale);
      }
    }
    return !live;
  }

  /** New entries become readable at `at` (the first token of the response that wrote them). */
  publish(keys: readonly string[], at: number): void {
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry !== undefined) entry.availableAt = Math.min(entry.availableAt, at);
    }
  }

  /** A hit refreshes the entry's TTL. */
  touch(key: string, now: number): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) this.put(key, entry.tokens, entry.ttlMs, now);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Live entries, oldest refresh first (GET /_sim/cache). */
  describe(now: number): Array<{ scope: string; tokens: number; expiresInMs: number }> {
    const out: Array<{ scope: string; tokens: number; expiresInMs: number }> = [];
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now || entry.availableAt > now) continue;
      out.push({
        scope: key.slice(0, key.lastIndexOf(SEP)).split(SEP).join(' / '),
        tokens: entry.tokens,
        expiresInMs: entry.expiresAt - now,
      });
    }
    return out;
  }
}

export interface CacheUsage {
  readTokens: number;
  writeTokens: number;
  /** the part of writeTokens written with a one-hour TTL */
  write1hTokens: number;
  /** entries this call wrote: publish them at its first token */
  written: string[];
}

export interface CacheCall {
  store: PromptCacheStore;
  /** the organization: the API key the call was made with */
  org: string;
  model: string;
  layout: PromptLayout;
  /** tokens of each message of the layout (text tokens + the per-message overhead) */
  messageTokens: readonly number[];
  /** per-message overhead included in messageTokens */
  overheadTokens: number;
  countTokens: (text: string) => number;
  ttlMs: number;
  now: number;
}

const SEP = '\u0000';

/** Reads and writes the cache for one call; returns what it read and wrote. */
export function applyPromptCache(call: CacheCall): CacheUsage {
  return call.layout.scheme === 'anthropic' ? anthropicCache(call) : openaiCache(call);
}

interface Unit {
  key: string;
  breakpoint: Breakpoint | null;
  /** -1 for a tool definition */
  message: number;
  block: number;
}

function unitsOf(layout: PromptLayout): Unit[] {
  const units: Unit[] = layout.tools.map((tool) => ({ key: `tool${SEP}${tool.key}`, breakpoint: tool.breakpoint, message: -1, block: 0 }));
  layout.messages.forEach((message, i) => {
    message.blocks.forEach((block, j) =>
      units.push({ key: `${j === 0 ? 'message' : 'block'}${SEP}${block.key}`, breakpoint: block.breakpoint, message: i, block: j }),
    );
  });
  return units;
}

/** Chained prefix hashes: hashes[u] identifies units 0..u (with the scheme, org and model in the key). */
function prefixKeys(call: CacheCall, units: readonly Unit[], through: number): string[] {
  const scope = [call.layout.scheme, orgId(call.org), call.model].join(SEP);
  const keys: string[] = [];
  let chain = '';
  for (let u = 0; u <= through && u < units.length; u += 1) {
    chain = createHash('sha256')
      .update(chain)
      .update(SEP)
      .update((units[u] as Unit).key)
      .digest('base64');
    keys.push(`${scope}${SEP}${chain}`);
  }
  return keys;
}

/** The organization as the cache names it: a digest of its key, never the key. */
export function orgId(key: string): string {
  return `org_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/** Tokens of the prompt up to the end of message i (exclusive prefix sums). */
function prefixSums(messageTokens: readonly number[]): number[] {
  const sums = [0];
  for (const tokens of messageTokens) sums.push((sums[sums.length - 1] as number) + tokens);
  return sums;
}

function anthropicCache(call: CacheCall): CacheUsage {
  const units = unitsOf(call.layout);
  const breakpoints = units.flatMap((unit, u) => (unit.breakpoint === null ? [] : [u]));
  const last = breakpoints[breakpoints.length - 1];
  if (last === undefined) return { readTokens: 0, writeTokens: 0, write1hTokens: 0, written: [] };
  const keys = prefixKeys(call, units, last);
  const sums = prefixSums(call.messageTokens);
  const tokensThrough = (u: number): number => {
    const unit = units[u] as Unit;
    if (unit.message < 0) return 0;
    const before = sums[unit.message] as number;
    const whole = call.messageTokens[unit.message] as number;
    const blocks = call.layout.messages[unit.message]?.blocks ?? [];
    if (unit.block === blocks.length - 1) return before + whole;
    const partial =
      call.countTokens(
        blocks
          .slice(0, unit.block + 1)
          .map((b) => b.text)
          .join('\n'),
      ) + call.overheadTokens;
    return before + Math.min(whole, partial);
  };

  // the longest live prefix at a boundary within the lookback of some breakpoint
  let readTokens = 0;
  let hitKey: string | undefined;
  const candidates = new Set<number>();
  for (const b of breakpoints) for (let u = Math.max(0, b - LOOKBACK_BLOCKS + 1); u <= b; u += 1) candidates.add(u);
  for (const u of candidates) {
    const entry = call.store.get(keys[u] as string, call.now);
    if (entry !== undefined && entry.tokens > readTokens) {
      readTokens = entry.tokens;
      hitKey = keys[u];
    }
  }
  if (hitKey !== undefined) call.store.touch(hitKey, call.now);

  // each breakpoint long enough is written (or refreshed); what lies past the read is paid as a write
  const minimum = minCacheableTokens(call.model);
  let covered = readTokens;
  let writeTokens = 0;
  let write1hTokens = 0;
  const written: string[] = [];
  for (const b of breakpoints) {
    const tokens = tokensThrough(b);
    if (tokens < minimum) continue;
    const key = keys[b] as string;
    const ttl = (units[b] as Unit).breakpoint?.ttl === '1h' ? Math.max(ONE_HOUR_MS, call.ttlMs) : call.ttlMs;
    // an entry another call is still writing is not readable: this call writes it too
    const readable = call.store.get(key, call.now) !== undefined;
    if (call.store.put(key, tokens, ttl, call.now) || !readable) written.push(key);
    if (readable || tokens <= covered) continue;
    writeTokens += tokens - covered;
    if (ttl > call.ttlMs) write1hTokens += tokens - covered;
    covered = tokens;
  }
  return { readTokens, writeTokens, write1hTokens, written };
}

function openaiCache(call: CacheCall): CacheUsage {
  const units = unitsOf(call.layout);
  if (units.length === 0) return { readTokens: 0, writeTokens: 0, write1hTokens: 0, written: [] };
  const keys = prefixKeys(call, units, units.length - 1);
  const sums = prefixSums(call.messageTokens);
  const minimum = minCacheableTokens(call.model);
  // message boundaries: the unit that ends each message, with the prompt's length there
  const ends: Array<{ key: string; tokens: number }> = [];
  units.forEach((unit, u) => {
    const blocks = call.layout.messages[unit.message]?.blocks.length ?? 0;
    if (unit.message >= 0 && unit.block === blocks - 1) ends.push({ key: keys[u] as string, tokens: sums[unit.message + 1] as number });
  });
  let readTokens = 0;
  for (let e = ends.length - 1; e >= 0; e -= 1) {
    const end = ends[e] as { key: string; tokens: number };
    if (end.tokens < minimum) break;
    if (call.store.get(end.key, call.now) !== undefined) {
      call.store.touch(end.key, call.now);
      readTokens = Math.floor(end.tokens / OPENAI_CACHE_INCREMENT) * OPENAI_CACHE_INCREMENT;
      break;
    }
  }
  const total = sums[sums.length - 1] as number;
  const written: string[] = [];
  if (total >= minimum) {
    for (const end of ends) {
      if (end.tokens < minimum) continue;
      const readable = call.store.get(end.key, call.now) !== undefined;
      if (call.store.put(end.key, end.tokens, call.ttlMs, call.now) || !readable) written.push(end.key);
    }
  }
  return { readTokens, writeTokens: 0, write1hTokens: 0, written };
}

/** JSON with sorted keys and every `cache_control` left out: what a block is, wherever its breakpoint sits. */
export function canonicalKey(value: unknown): string {
  return JSON.stringify(canonical(value));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (key === 'cache_control') continue;
    out[key] = canonical((value as Record<string, unknown>)[key]);
  }
  return out;
}
