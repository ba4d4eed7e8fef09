import type { Config } from '../config/env.js';
import { createDb } from '../db/client.js';
import { runMigrations } from '../db/migrate.js';
import { getTenantIdByName, setTenantQuotas, tenantQuotas } from '../db/repos/tenant-quotas.js';

const USAGE = 'usage: compactd tenants quotas NAME [--max-active N|default] [--per-minute N|default]\n';

/** A quota value: a positive integer, or `default` (back to the COMPACTD_TENANT_* default). */
function parseQuota(value: string | undefined): number | null | undefined | 'invalid' {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  return /^[1-9]\d{0,8}$/.test(value) ? Number(value) : 'invalid';
}

/**
 * `compactd tenants quotas NAME [--max-active N] [--per-minute N]`: sets a tenant's own
 * compaction quotas (or `default`), then prints the quotas in force.
 */
export async function runTenants(config: Config, args: string[]): Promise<number> {
  const [command, name, ...rest] = args;
  if (command !== 'quotas' || !name || name.startsWith('--')) {
    process.stderr.write(USAGE);
    return 2;
  }
  const option = (flag: string) => {
    const index = rest.indexOf(`--${flag}`);
    return index >= 0 ? rest[index + 1] ?? '' : undefined;
  };
  const maxActive = parseQuota(option('max-active'));
  const perMinute = parseQuota(option('per-minute'));
  if (maxActive === 'invalid' || perMinute === 'invalid') {
    process.stderr.write(`--max-active and --per-minute take a positive integer or "default"\n${USAGE}`);
    return 2;
  }
  await runMigrations(config.databaseUrl);
  const handle = createDb(config.databaseUrl, { max: 1, name: 'compactd-tenants' });
  try {
    const tenantId = await getTenantIdByName(handle.db, name);
    if (!tenantId) {
      process.stderr.write(`no tenant is named ${name}\n`);
      return 1;
    }
    if (maxActive !== undefined || perMinute !== undefined) {
      await setTenantQuotas(handle.db, name, {
        ...(maxActive === undefined ? {} : { maxActiveCompactions: maxActive }),
        ...(perMinute === undefined ? {} : { compactionsPerMinute: perMinute }),
      });
    }
    const quotas = await tenantQuotas(handle.db, tenantId, config.quotas);
    process.stdout.write(`tenant ${name}: max active compactions ${quotas.maxActiveCompactions}, compactions per minute ${quotas.compactionsPerMinute}\n`);
    return 0;
  } finally {
    await handle.close();
  }
}
