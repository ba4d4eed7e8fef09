import { createHash, timingSafeEqual } from 'node:crypto';

/*
 * The credentials of a request, apart from any route or framework: the worker's metrics server
 * checks the admin token with them, without loading the API's dashboard and its dependencies.
 */

/** Constant-time comparison (of digests, so lengths never leak either). */
export function tokenEquals(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The token of `Authorization: Bearer <token>`, or the password of `Basic base64(user:password)`. */
export function presentedToken(header: string | undefined): string | null {
  if (!header) return null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer?.[1]) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic?.[1]) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : null;
}
