import type { Config } from '../../config/env.js';
import { createDb } from '../../db/client.js';
import { runMigrations } from '../../db/migrate.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../db/repos/api-keys.js';

/** `compactd keys create --tenant NAME [--name LABEL] | list [--tenant NAME] | revoke ID|PREFIX`. */
export async function runKeys(config: Config, args: string[]): Promise<number> {
  const [command, ...rest] = args;
  const option = (name: string) => {
    const index = rest.indexOf(`--${name}`);
    return index >= 0 ? rest[index + 1] : undefined;
  };
  await runMigrations(config.databaseUrl);
  const handle = createDb(config.databaseUrl, { max: 1, name: 'compactd-keys' });
  try {
    switch (command) {
      case 'create': {
        const tenantName = option('tenant') ?? 'default';
        const label = option('name');
        const created = await createApiKey(handle.db, { tenantName, ...(label ? { name: label } : {}) });
        process.stdout.write(`${created.key}\n`);
        process.stderr.write(`created key ${created.prefix}… for tenant "${created.tenant.name}" (shown once; store it now)\n`);
        return 0;
      }
      case 'list': {
        const rows = await listApiKeys(handle.db, option('tenant'));
        for (const row of rows) {
          process.stdout.write(
            `${row.id}  ${row.prefix}…  tenant=${row.tenant}  ${row.name ?? ''}  created=${row.createdAt.toISOString()}${row.revokedAt ? `  revoked=${row.revokedAt.toISOString()}` : ''}\n`,
          );
        }
        return 0;
      }
      case 'revoke': {
        const target = rest[0];
        if (!target) {
          process.stderr.write('usage: compactd keys revoke <id|prefix>\n');
          return 2;
        }
        const count = await revokeApiKey(handle.db, target);
        process.stderr.write(count > 0 ? `revoked ${count} key(s)\n` : `no active key matches ${target}\n`);
        return count > 0 ? 0 : 1;
      }
      default:
        process.stderr.write('usage: compactd keys create --tenant NAME [--name LABEL] | list [--tenant NAME] | revoke ID|PREFIX\n');
        return 2;
    }
  } finally {
    await handle.close();
  }
}
