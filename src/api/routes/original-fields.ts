import type { OriginalRow } from '../../db/repos/archive.js';

/**
 * What an original carries besides its content, the same in an export line and in a batch's
 * messages: the metadata it was appended with (an importer's fields, the `meta` flag), `meta:
 * true` for a meta turn as the active listing says it, the usage it was appended with, and
 * whether the seq is pinned now. With them an export re-imports as the same conversation, and a
 * reader of the archive tells a harness turn from the user's.
 */
export function originalFields(row: Pick<OriginalRow, 'role' | 'metadata' | 'usage' | 'pinned'>) {
  const metadata = row.metadata !== null && Object.keys(row.metadata).length > 0 ? row.metadata : undefined;
  return {
    ...(metadata === undefined ? {} : { metadata }),
    // the listing's rule (api/views.ts): only a user turn is ever a meta turn
    ...(metadata?.['meta'] === true && row.role === 'user' ? { meta: true as const } : {}),
    ...(row.usage === null ? {} : { usage: row.usage }),
    pinned: row.pinned,
  };
}
