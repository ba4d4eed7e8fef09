import { type CompactdClient, createClient, isCompactdError } from '../../client/index.js';
import type { ProgressStream } from './progress.js';

/**
 * Plumbing of the client-side commands (`import`, `compact`, `demo`). They reach a running
 * service over HTTP: `--url` (default COMPACTD_URL, else http://127.0.0.1:8080) and `--key`
 * (default COMPACTD_API_KEY, else COMPACTD_BOOTSTRAP_KEY, the key the service was started with).
 */

/** Where a command writes and what it reads, so tests and main.ts can hand in their own. */
export interface CliIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  env: Record<string, string | undefined>;
  /** asked only in interactive mode (a terminal, no --yes) */
  confirm?: ((question: string) => Promise<boolean>) | undefined;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, ...(process.stdin.isTTY ? { confirm: askOnTerminal } : {}) };
}

/** A yes/no question on the terminal; Enter means yes. */
async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(question)).trim().toLowerCase();
    return answer === '' || answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

export const CONNECTION_USAGE = `  --url URL        the compactd API (default $COMPACTD_URL or ${DEFAULT_URL})
  --key KEY        API key (default $COMPACTD_API_KEY, else $COMPACTD_BOOTSTRAP_KEY)`;

export interface Connection {
  url: string;
  key: string | undefined;
  /** where the key came from, for messages */
  keySource: string | undefined;
}

export function resolveConnection(
  values: { url?: string | undefined; key?: string | undefined },
  env: Record<string, string | undefined>,
): Connection {
  const url = values.url ?? (env['COMPACTD_URL'] || DEFAULT_URL);
  if (values.key) return { url, key: values.key, keySource: '--key' };
  for (const name of ['COMPACTD_API_KEY', 'COMPACTD_BOOTSTRAP_KEY']) {
    const value = env[name];
    if (value) return { url, key: value, keySource: name };
  }
  return { url, key: undefined, keySource: undefined };
}

export function connect(connection: Connection): CompactdClient {
  return createClient({ baseUrl: connection.url, apiKey: connection.key });
}

export const MISSING_KEY_HELP = `compactd needs an API key. Either
  - start the service with a bootstrap key and give the CLI the same one:
      COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npm start
      COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npx compactd demo
  - or create one (on the service's machine) and pass it:
      export COMPACTD_API_KEY=$(npx compactd keys create --tenant default)
`;

/** One readable paragraph for a failed command: the problem, its fields, and a hint. */
export function describeError(error: unknown, connection: Connection): string {
  if (!isCompactdError(error)) return `compactd: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
  const lines = [`compactd: ${error.code}${error.status > 0 ? ` (${error.status})` : ''}: ${error.detail ?? error.title}`];
  for (const field of error.errors) lines.push(`  ${field.field}: ${field.message}`);
  if (error.code === 'CONNECTION_FAILED' || error.code === 'TIMEOUT') {
    lines.push(`is compactd running at ${connection.url}? Start it with \`npm start\` (or \`docker compose up\`), or pass --url.`);
  }
  if (error.status === 401) {
    lines.push(connection.key ? `the key from ${connection.keySource} was refused.` : 'no API key was given.');
    lines.push(MISSING_KEY_HELP.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/** A bad command line: the command prints the message and its usage, and exits 2. */
export class UsageError extends Error {}

/** A numeric option, or a UsageError naming it. */
export function numberOption(name: string, value: string | undefined, check: (n: number) => boolean = Number.isFinite): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === '' || !check(parsed)) throw new UsageError(`--${name}: invalid value "${value}"`);
  return parsed;
}
