import { type GatewayAccessPatch, GatewayAccessPatchSchema } from '../../api/gateway/model-access.js';
import type { Config } from '../../config/env.js';
import { createDb, type Db } from '../../db/client.js';
import { runMigrations } from '../../db/migrate.js';
import { getGatewayAccess, setGatewayAccess } from '../../db/repos/tenant-gateway-access.js';
import { getTenantIdByName, setTenantQuotas, tenantQuotas } from '../../db/repos/tenant-quotas.js';

const USAGE =
  'usage: compactd tenants quotas NAME [--max-active N|default] [--per-minute N|default]\n' +
  '       compactd tenants gateway-access NAME [--models ID,ID…|default] [--server-tools TYPE,TYPE…|default]\n';

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
  if ((command !== 'quotas' && command !== 'gateway-access') || !name || name.startsWith('--')) {
    process.stderr.write(USAGE);
    return 2;
  }
  const option = (flag: string) => {
    const index = rest.indexOf(`--${flag}`);
    return index >= 0 ? (rest[index + 1] ?? '') : undefined;
  };
  if (command === 'gateway-access') return runGatewayAccess(config, name, option);
  const maxActive = parseQuota(option('max-active'));
  const perMinute = parseQuota(option('per-minute'));
  if (maxActive === 'invalid' || perMinute === 'invalid') {
    process.stderr.write(`--max-active and --per-minute take a positive integer or "default"\n${USAGE}`);
    return 2;
  }
  return withTenant(config, name, async (db, tenantId) => {
    if (maxActive !== undefined || perMinute !== undefined) {
      await setTenantQuotas(db, name, {
        ...(maxActive === undefined ? {} : { maxActiveCompactions: maxActive }),
        ...(perMinute === undefined ? {} : { compactionsPerMinute: perMinute }),
      });
    }
    const quotas = await tenantQuotas(db, tenantId, config.quotas);
    process.stdout.write(
      `tenant ${name}: max active compactions ${quotas.maxActiveCompactions}, compactions per minute ${quotas.compactionsPerMinute}\n`,
    );
    return 0;
  });
}

/** Runs `work` on the migrated database for the tenant named `name`; 1 when there is none. */
async function withTenant(config: Config, name: string, work: (db: Db, tenantId: string) => Promise<number>): Promise<number> {
  await runMigrations(config.databaseUrl);
  const handle = createDb(config.databaseUrl, { max: 1, name: 'compactd-tenants' });
  try {
    const tenantId = await getTenantIdByName(handle.db, name);
    if (!tenantId) {
      process.stderr.write(`no tenant is named ${name}\n`);
      return 1;
    }
    return await work(handle.db, tenantId);
  } finally {
    await handle.close();
  }
}

/** A list option: comma-separated entries, or `default` (back to the default, null). */
function parseList(value: string | undefined): string[] | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

const describeList = (list: string[] | null, fallback: string) =>
  list === null ? `default (${fallback})` : list.length === 0 ? 'none' : list.join(', ');

/**
 * `compactd tenants gateway-access NAME [--models …] [--server-tools …]`: what the tenant may
 * use through the gateway with compactd's provider key (api/gateway/model-access.ts), then
 * prints the setting in force.
 */
async function runGatewayAccess(config: Config, name: string, option: (flag: string) => string | undefined): Promise<number> {
  const patch: GatewayAccessPatch = {};
  const models = parseList(option('models'));
  const serverTools = parseList(option('server-tools'));
  if (models !== undefined) patch.models = models;
  if (serverTools !== undefined) patch.serverTools = serverTools;
  const parsed = GatewayAccessPatchSchema.safeParse(patch);
  if (!parsed.success) {
    const flags: Record<string, string> = { models: '--models', serverTools: '--server-tools' };
    for (const issue of parsed.error.issues) {
      const [field, index] = issue.path;
      const entry = typeof index === 'number' ? ` entry ${JSON.stringify((patch[field as keyof GatewayAccessPatch] ?? [])[index])}` : '';
      process.stderr.write(`${flags[String(field)] ?? String(field)}${entry}: ${issue.message}\n`);
    }
    process.stderr.write(USAGE);
    return 2;
  }
  return withTenant(config, name, async (db, tenantId) => {
    const access =
      models === undefined && serverTools === undefined
        ? await getGatewayAccess(db, tenantId)
        : await setGatewayAccess(db, name, parsed.data);
    process.stdout.write(
      `tenant ${name}, gateway with compactd's provider key: models ${describeList(access?.models ?? null, "the model registry's models of each provider")}; server tools ${describeList(access?.serverTools ?? null, 'none')}\n`,
    );
    return 0;
  });
}
