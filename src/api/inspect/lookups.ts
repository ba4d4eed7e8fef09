import type { ConversationRow } from '../../db/repos/conversations.js';
import { findConversation } from '../../db/repos/inspector.js';
import { AppError, notFound } from '../../lib/errors.js';
import type { ApiDeps } from '../deps.js';
import type { Viewer } from './viewer.js';

/** The conversation the viewer may see; the operator names the tenant when two tenants use the same id. */
export async function requireConversation(
  deps: Pick<ApiDeps, 'db'>,
  viewer: Viewer,
  id: string,
  tenant?: string,
): Promise<ConversationRow> {
  const found = await findConversation(deps.db, viewer.scope, id, tenant);
  if (!found) throw notFound('conversation', id);
  if ('ambiguous' in found) {
    throw new AppError(
      'AMBIGUOUS_CONVERSATION',
      `conversation ${id} exists in tenants ${found.ambiguous.map((c) => c.tenantId).join(', ')}: add ?tenant=<id>`,
      {
        status: 409,
        field: 'querystring.tenant',
      },
    );
  }
  return found.found;
}
