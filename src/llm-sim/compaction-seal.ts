import { createCipheriv, createDecipheriv, createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The opaque parts of provider compactions as llm-sim issues them, and their checks:
 * - Anthropic on-demand `signature`: `simsig1.<payload>.<mac>`, an HMAC over the digest of the
 *   block's `content`, so a later request's block verifies byte-exact;
 * - Anthropic threshold `encrypted_content` and OpenAI compaction `encrypted_content`:
 *   `simenc1.<data>`, AES-256-GCM over what the sim needs back (the content's digest; for
 *   OpenAI the summary itself, which the client never sees).
 * The key is fixed in the sim, so any llm-sim verifies what another issued, as one provider
 * would; nothing outside the sim can forge either. Same input, same output (the IV derives
 * from the plaintext), so runs are reproducible.
 */

const ROOT = createHash('sha256').update('llm-sim provider compaction key, v1').digest();
const MAC_KEY = createHmac('sha256', ROOT).update('mac').digest();
const ENC_KEY = createHmac('sha256', ROOT).update('enc').digest();
const SIGNATURE_PREFIX = 'simsig1.';
const SEALED_PREFIX = 'simenc1.';

const digest = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64url');
const mac = (payload: string): Buffer => createHmac('sha256', MAC_KEY).update(payload).digest();

/** The signature of an on-demand compaction block over its content. */
export function signCompaction(content: string): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, h: digest(content) })).toString('base64url');
  return `${SIGNATURE_PREFIX}${payload}.${mac(payload).toString('base64url')}`;
}

/**
 * `ok`; `invalid` when the signature is not one the sim issued (malformed, forged, not a
 * string); `mismatch` when it is, but over other content than the block carries.
 */
export function checkCompactionSignature(content: string, signature: unknown): 'ok' | 'invalid' | 'mismatch' {
  if (typeof signature !== 'string' || !signature.startsWith(SIGNATURE_PREFIX)) return 'invalid';
  const [payload = '', tag = '', ...rest] = signature.slice(SIGNATURE_PREFIX.length).split('.');
  if (rest.length > 0 || payload === '' || tag === '') return 'invalid';
  const expected = mac(payload);
  const given = Buffer.from(tag, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const signed = parseJson(Buffer.from(payload, 'base64url').toString('utf8'));
  if (typeof signed?.['h'] !== 'string') return 'invalid';
  return signed['h'] === digest(content) ? 'ok' : 'mismatch';
}

/** Encrypts a JSON object into an opaque string. */
export function seal(data: Record<string, unknown>): string {
  const plain = Buffer.from(JSON.stringify(data), 'utf8');
  const iv = createHmac('sha256', ENC_KEY).update(plain).digest().subarray(0, 12);
  const cipher = createCipheriv('aes-256-gcm', ENC_KEY, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return `${SEALED_PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** The object `seal` encrypted, or null when the string is not one the sim issued. */
export function unseal(sealed: unknown): Record<string, unknown> | null {
  if (typeof sealed !== 'string' || !sealed.startsWith(SEALED_PREFIX)) return null;
  const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
  if (raw.length < 29) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', ENC_KEY, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    return parseJson(plain.toString('utf8'));
  } catch {
    return null;
  }
}

/** The `encrypted_content` of a threshold-mode (`compact_20260112`) block over its content. */
export function sealThresholdBlock(content: string): string {
  return seal({ k: 'compact_20260112', h: digest(content) });
}

/** Same verdicts as checkCompactionSignature, for a threshold-mode block. */
export function checkThresholdBlock(content: string, encrypted: unknown): 'ok' | 'invalid' | 'mismatch' {
  const data = unseal(encrypted);
  if (data?.['k'] !== 'compact_20260112' || typeof data['h'] !== 'string') return 'invalid';
  return data['h'] === digest(content) ? 'ok' : 'mismatch';
}

/** The `encrypted_content` of an OpenAI compaction item: the summary, hidden. */
export function sealResponsesItem(summary: string, model: string): string {
  return seal({ k: 'responses', s: summary, m: model });
}

/** The summary inside an OpenAI compaction item, or null when the sim did not issue it. */
export function openResponsesItem(encrypted: unknown): string | null {
  const data = unseal(encrypted);
  return data?.['k'] === 'responses' && typeof data['s'] === 'string' ? data['s'] : null;
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
