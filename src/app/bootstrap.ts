import type { Db } from '../db/client.js';
import { ensureTenant, insertApiKey } from '../db/repos/api-keys.js';

/** COMPACTD_BOOTSTRAP_KEY: make sure tenant `default` exists and holds that key. */
export async function ensureBootstrapKey(db: Db, key: string | undefined): Promise<void> {
  if (!key) return;
  const tenant = await ensureTenant(db, 'default');
  await insertApiKey(db, { tenantId: tenant.id, key, name: 'bootstrap' });
}
