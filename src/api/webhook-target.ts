import { promises as dns } from 'node:dns';

import { badRequest } from '../lib/errors.js';
import {
  checkResolvedAddresses,
  checkWebhookHost,
  EMPTY_ALLOW_LIST,
  type HostResolver,
  type WebhookAllowList,
} from '../lib/webhook-target.js';

/** How long setting a webhook waits for DNS before leaving the check to delivery time. */
const LOOKUP_TIMEOUT_MS = 3_000;

const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Refuses (400 naming `body.url`) a webhook URL whose host is, or resolves to, an address
 * that is not public (lib/webhook-target.ts), unless the operator allowed it. A name that
 * does not resolve now is accepted: the worker resolves and checks again before every
 * attempt, which is the check that counts (DNS answers change).
 * The message names the literal address the client wrote, never what a name resolved to
 * (that would describe the service's internal DNS).
 */
export async function assertWebhookTarget(
  target: string,
  options: { allow?: WebhookAllowList | undefined; resolveHost?: HostResolver | undefined },
): Promise<void> {
  const allow = options.allow ?? EMPTY_ALLOW_LIST;
  const refuse = (message: string) => badRequest('WEBHOOK_TARGET_NOT_ALLOWED', `must reach a public address: ${message}`, 'body.url');
  let hostname: string;
  try {
    hostname = new URL(target).hostname;
  } catch {
    throw badRequest('INVALID_WEBHOOK_URL', 'must be an http or https URL', 'body.url');
  }
  const verdict = checkWebhookHost(hostname, allow);
  if (verdict.kind === 'refused') throw refuse(verdict.reason);
  if (verdict.kind === 'allowed') return;
  const addresses = await resolveWithin(options.resolveHost ?? systemResolver, verdict.hostname, LOOKUP_TIMEOUT_MS);
  if (addresses === null) return;
  if (checkResolvedAddresses(addresses, allow).kind === 'refused') throw refuse(`${verdict.hostname} resolves to one that is not`);
}

/** The addresses, or null when the name does not resolve (yet) or DNS is slow. */
async function resolveWithin(resolveHost: HostResolver, hostname: string, timeoutMs: number): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    const answer = await Promise.race([resolveHost(hostname).then((list) => list.map((a) => a.address)), timeout]);
    return answer;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
