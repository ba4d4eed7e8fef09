// `compactd` CLI: parse argv, call one app/* entrypoint. No logic here.
import { loadConfigOrExit } from './app/load-config.js';

const USAGE = `usage: compactd <command>

  start            run migrations, then the API and the worker in one process
  api              the HTTP API only
  worker           the queue workers only
  migrate          apply database migrations and exit
  keys create --tenant NAME | keys list | keys revoke ID
  tenants quotas NAME [--max-active N|default] [--per-minute N|default]
  tenants gateway-access NAME [--models ID,…|default] [--server-tools TYPE,…|default]
  llm-sim          loopback Anthropic/OpenAI-compatible simulator (see --help)
  demo             import a real Claude Code session into a running service and compact it
  import FILE      append a transcript file to a conversation (see --help)
  compact ID       enqueue a compaction and follow it with progress (see --help)
  mcp              MCP server (stdio or streamable HTTP) with the agent tools (see --help)
`;

const [command, ...args] = process.argv.slice(2);

async function main(): Promise<number | undefined> {
  switch (command) {
    case 'start': {
      const { startAll } = await import('./app/start-all.js');
      await startAll(loadConfigOrExit());
      return undefined;
    }
    case 'api': {
      const { startApi } = await import('./app/start-api.js');
      await startApi(loadConfigOrExit());
      return undefined;
    }
    case 'worker': {
      const { startWorker } = await import('./app/start-worker.js');
      await startWorker(loadConfigOrExit());
      return undefined;
    }
    case 'migrate': {
      const { runMigrations } = await import('./db/migrate.js');
      await runMigrations(loadConfigOrExit().databaseUrl);
      process.stderr.write('migrations applied\n');
      return 0;
    }
    case 'keys': {
      const { runKeys } = await import('./app/cli/keys.js');
      return runKeys(loadConfigOrExit(), args);
    }
    case 'tenants': {
      const { runTenants } = await import('./app/cli/tenants.js');
      return runTenants(loadConfigOrExit(), args);
    }
    case 'llm-sim': {
      const { runLlmSim } = await import('./app/cli/llm-sim.js');
      await runLlmSim(args);
      return undefined;
    }
    case 'demo': {
      const { runDemo } = await import('./app/cli/demo.js');
      return runDemo(args);
    }
    case 'import': {
      const { runImport } = await import('./app/cli/import.js');
      return runImport(args);
    }
    case 'compact': {
      const { runCompact } = await import('./app/cli/compact.js');
      return runCompact(args);
    }
    case 'mcp': {
      const { runMcp } = await import('./app/cli/mcp.js');
      return runMcp(args);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command: ${command}\n${USAGE}`);
      return 2;
  }
}

main().then(
  (code) => {
    if (code !== undefined) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`compactd: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
