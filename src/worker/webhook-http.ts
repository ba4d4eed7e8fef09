import { promises as dns } from 'node:dns';
import { type ClientRequest, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

import { checkResolvedAddresses, checkWebhookHost, type HostResolver, type WebhookAllowList } from '../lib/webhook-target.js';

/**
 * The one HTTP request of a webhook attempt, made only to an address the target rules allow
 * (lib/webhook-target.ts). A host name is resolved inside the connection's `lookup`: every
 * address of that answer is checked and the socket connects to the checked addresses, so a
 * DNS answer that changed since the webhook was set (rebinding) cannot slip past the check.
 * TLS still verifies the certificate against the host name (SNI and Host header unchanged).
 */

export type PostOutcome =
  | { kind: 'answered'; statusCode: number }
  /** the target is not allowed; `reason` is for the operator's log only */
  | { kind: 'refused'; reason: string }
  /** no answer (DNS failure, refused connection, reset, timeout); `cause` for the operator's log only */
  | { kind: 'no_answer'; cause: string };

export interface PostOptions {
  allow: WebhookAllowList;
  timeoutMs: number;
  /** default: the system resolver (`dns.lookup`, as an ordinary connection would use) */
  resolveHost?: HostResolver;
}

export const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

class TargetRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'TargetRefusedError';
  }
}

/** A `lookup` for the socket that resolves, checks every address, and hands over only checked ones. */
function checkedLookup(resolveHost: HostResolver, allow: WebhookAllowList, checkAddresses: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(hostname).then(
      (addresses) => {
        const verdict = checkAddresses
          ? checkResolvedAddresses(
              addresses.map((a) => a.address),
              allow,
            )
          : { kind: 'allowed' as const };
        const [first] = addresses;
        if (verdict.kind !== 'allowed' || !first) {
          callback(new TargetRefusedError(verdict.kind === 'refused' ? verdict.reason : 'no address'), '', 0);
        } else if (options.all) {
          (callback as unknown as (err: null, addresses: Array<{ address: string; family: number }>) => void)(null, addresses);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/** POSTs `body`; resolves with the status code without reading the answer's body. Never throws. */
export function postWebhook(target: string, headers: Record<string, string>, body: string, options: PostOptions): Promise<PostOutcome> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.resolve({ kind: 'refused', reason: 'not a URL' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve({ kind: 'refused', reason: `scheme ${url.protocol}` });
  const verdict = checkWebhookHost(url.hostname, options.allow);
  if (verdict.kind === 'refused') return Promise.resolve(verdict);
  // An address literal never reaches `lookup` (net connects to it directly); checkWebhookHost judged it.
  const lookup = checkedLookup(options.resolveHost ?? systemResolver, options.allow, verdict.kind === 'resolve');
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    lookup,
    // A fresh connection per attempt: a pooled socket would skip the check of this attempt's answer.
    agent: false,
    signal: AbortSignal.timeout(options.timeoutMs),
  };
  return new Promise((resolve) => {
    const request: ClientRequest = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      requestOptions,
      (response: IncomingMessage) => {
        resolve({ kind: 'answered', statusCode: response.statusCode ?? 0 });
        // The answer's body is never read or kept: drop the connection.
        response.destroy();
      },
    );
    request.on('error', (error: Error) => {
      if (error instanceof TargetRefusedError) resolve({ kind: 'refused', reason: error.reason });
      else resolve({ kind: 'no_answer', cause: describe(error) });
    });
    request.end(body);
  });
}

function describe(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code ? `${code}: ${error.message}` : error.message;
}
