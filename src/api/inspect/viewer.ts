import type { InspectScope } from '../../db/repos/inspector.js';
import { href } from './html.js';

/**
 * Who is looking: a tenant (its key, which also lets it act: compact, revert) or the
 * operator (the admin token: every tenant, read-only, since actions belong to a tenant).
 */
export interface Viewer {
  scope: InspectScope;
  /** the tenant key presented, for actions forwarded to the JSON API; never written into a page */
  tenantKey: string | null;
}

export const isAdmin = (viewer: Viewer): boolean => !('tenantId' in viewer.scope);

/** Link to a conversation page; the operator's links name the tenant, since ids are unique per tenant only. */
export function conversationHref(
  viewer: Viewer,
  conversation: { externalId: string; tenantId: string },
  query: Record<string, string | number | undefined> = {},
  suffix = '',
): string {
  const path = `/inspect/conversations/${encodeURIComponent(conversation.externalId)}${suffix}`;
  return href(path, { ...(isAdmin(viewer) ? { tenant: conversation.tenantId } : {}), ...query });
}

export const jobHref = (id: string): string => `/inspect/jobs/${id}`;
