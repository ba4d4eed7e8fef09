import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Db } from '../../db/client.js';
import { findTenantByApiKey } from '../../db/repos/api-keys.js';
import { presentedToken, tokenEquals } from '../credentials.js';
import { sendProblem } from '../problem.js';
import type { Viewer } from './viewer.js';

declare module 'fastify' {
  interface FastifyRequest {
    inspectViewer: Viewer;
  }
}

/** Pages may load only this origin's script, stylesheet and data: images; nothing inline, never framed. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const REALM = 'Basic realm="compactd", charset="UTF-8"';

/**
 * The API's credentials, read the way the queue dashboard reads them (a bearer token, or the
 * Basic-auth password so a browser's prompt works): a tenant key sees its tenant, the admin
 * token (COMPACTD_ADMIN_TOKEN) every tenant.
 */
export function inspectAuth(db: Db, adminToken: string | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const given = presentedToken(request.headers.authorization);
    if (given !== null) {
      if (adminToken !== undefined && tokenEquals(given, adminToken)) {
        request.inspectViewer = { scope: { allTenants: true }, tenantKey: null };
        return;
      }
      const found = await findTenantByApiKey(db, given);
      if (found) {
        request.inspectViewer = { scope: { tenantId: found.tenantId }, tenantKey: given };
        return;
      }
    }
    void reply.header('www-authenticate', REALM);
    return sendProblem(reply, request, {
      status: 401,
      code: 'UNAUTHORIZED',
      detail: 'give a tenant API key (or COMPACTD_ADMIN_TOKEN) as a bearer token or as the Basic auth password',
    });
  };
}

export async function securityHeaders(_request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  void reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('referrer-policy', 'no-referrer');
  void reply.header('x-frame-options', 'DENY');
  if (!reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
  return payload;
}

/**
 * Browsers resend Basic credentials to this origin whoever made the page that posts, so an
 * action is taken only from a page of this origin (Origin, else Sec-Fetch-Site, must say so).
 */
export function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') {
    try {
      // both read with the origin's scheme, so a default port written out (host: "x:80") still matches
      const from = new URL(origin);
      return request.headers.host !== undefined && new URL(`${from.protocol}//${request.headers.host}`).host === from.host;
    } catch {
      return false;
    }
  }
  return request.headers['sec-fetch-site'] === 'same-origin';
}
