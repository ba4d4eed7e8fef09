import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { databaseUrl, TEST_DB_PREFIX } from '../../../harness/service-urls.js';

/**
 * The package as a user gets it: `npm pack` (which builds through `prepare`), the tarball
 * unpacked into a scratch project's node_modules, then used from there. The client is
 * imported with no other package installed, so anything of the server it reached at run
 * time would fail to load; the CLI runs with the declared runtime dependencies only.
 */

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
const scratch = mkdtempSync(path.join(tmpdir(), 'compactd-pack-'));
let tarball: string;
let packedFiles: string[];

/** A scratch ESM project with the tarball unpacked as node_modules/compactd. */
function scratchProject(name: string): string {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, 'node_modules/compactd'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `scratch-${name}`, private: true, type: 'module' }));
  return dir;
}

async function unpackInto(dir: string): Promise<void> {
  await execFileAsync('tar', ['-xzf', tarball, '-C', path.join(dir, 'node_modules/compactd'), '--strip-components=1']);
}

/** Links a package of this checkout's node_modules into a scratch project (as an install would place it). */
function linkFromCheckout(dir: string, name: string): void {
  const target = path.join(dir, 'node_modules', name);
  mkdirSync(path.dirname(target), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules', name), target, 'dir');
}

beforeAll(async () => {
  const { stdout } = await execFileAsync('npm', ['pack', '--json', '--pack-destination', scratch], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
  tarball = path.join(scratch, packed.filename);
  packedFiles = packed.files.map((f) => f.path);
}, 180_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('npm pack', () => {
  it('ships only what runs: dist/, bin/, migrations/, the demo sample, README and package.json', () => {
    const topLevel = new Set(packedFiles.map((f) => (f.includes('/') ? `${f.split('/')[0]}/` : f)));
    expect([...topLevel].sort()).toEqual(['README.md', 'bin/', 'dist/', 'migrations/', 'package.json', 'samples/']);
    expect(packedFiles.filter((f) => /^(src|test|bench|chaos|eval|examples|scripts)\//.test(f))).toEqual([]);
    expect(packedFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    // the inspector's plain assets, copied by the build beside the module that serves them
    expect(packedFiles).toEqual(expect.arrayContaining(['dist/api/inspect/assets/inspect.js', 'dist/api/inspect/assets/inspect.css']));
    expect(packedFiles).not.toContain('dist/.tsbuildinfo');
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'bin/compactd.mjs',
        'dist/main.js',
        'dist/client/index.js',
        'dist/client/index.d.ts',
        'dist/integrations/langchain/index.js',
        'dist/integrations/langchain/index.d.ts',
        'dist/integrations/ai-sdk/index.js',
        'dist/integrations/ai-sdk/index.d.ts',
        'migrations/meta/_journal.json',
        'samples/claude-code-session.jsonl',
      ]),
    );
    const migrations = readdirSync(path.join(repoRoot, 'migrations')).filter((f) => f.endsWith('.sql'));
    for (const sql of migrations) expect(packedFiles).toContain(`migrations/${sql}`);
  });
});

describe('compactd/client from the tarball', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    // A stand-in for the service, enough for one success and one problem+json error.
    server = createServer((req, res) => {
      if (req.url === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
        return;
      }
      const problem = {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        code: 'CONVERSATION_NOT_FOUND',
        detail: 'no conversation nope',
      };
      res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify(problem));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('imports from plain Node ESM with no other package installed, and talks to the service', async () => {
    const dir = scratchProject('client');
    await unpackInto(dir);
    expect(readdirSync(path.join(dir, 'node_modules'))).toEqual(['compactd']);
    writeFileSync(
      path.join(dir, 'check.mjs'),
      `import { createClient, isCompactdError } from 'compactd/client';
const client = createClient({ baseUrl: process.argv[2], apiKey: 'key', retries: 0 });
const methods = Object.keys(client).filter((k) => typeof client[k] === 'function').sort();
const health = await client.health();
const missing = await client.getConversation('nope').catch((error) => ({ notFound: isCompactdError(error, 'CONVERSATION_NOT_FOUND'), status: error.status }));
console.log(JSON.stringify({ methods, health, missing }));
`,
    );
    const { stdout } = await execFileAsync(process.execPath, ['check.mjs', url], { cwd: dir });
    const result = JSON.parse(stdout) as { methods: string[]; health: unknown; missing: unknown };
    expect(result.methods).toEqual(
      expect.arrayContaining([
        'createConversation',
        'appendMessages',
        'getContext',
        'compact',
        'getJob',
        'waitForJob',
        'exportConversation',
        'searchArchive',
        'setWebhook',
        'health',
        'ready',
      ]),
    );
    expect(result.health).toEqual({ status: 'ok' });
    expect(result.missing).toEqual({ notFound: true, status: 404 });
  });

  it('imports compactd/ai-sdk with no framework installed (it needs the `ai` package for types only)', async () => {
    const dir = scratchProject('ai-sdk');
    await unpackInto(dir);
    writeFileSync(
      path.join(dir, 'check.mjs'),
      `import * as adapter from 'compactd/ai-sdk';\nconsole.log(JSON.stringify(Object.keys(adapter).sort()));\n`,
    );
    const { stdout } = await execFileAsync(process.execPath, ['check.mjs'], { cwd: dir });
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining(['compactdSession']));
  });

  it('bundles for the browser: no Node built-in and no server module is reachable', async () => {
    const dir = scratchProject('bundle');
    await unpackInto(dir);
    writeFileSync(
      path.join(dir, 'entry.mjs'),
      `import { createClient } from 'compactd/client';\nexport const client = createClient({ baseUrl: '/', apiKey: 'key' });\n`,
    );
    // esbuild is the bundler under vite and tsx (both devDependencies).
    const { build } = await import('esbuild');
    const result = await build({
      entryPoints: [path.join(dir, 'entry.mjs')],
      absWorkingDir: dir,
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => !input.startsWith('node_modules/compactd/dist/client/') && input !== 'entry.mjs')).toEqual([]);
  });

  it('types it through the exports map from the shipped .d.ts', async () => {
    const dir = scratchProject('types');
    await unpackInto(dir);
    // The declarations name zod's types (the schemas they come from); fetch's types come from @types/node.
    linkFromCheckout(dir, 'zod');
    linkFromCheckout(dir, '@types/node');
    const tsconfig = {
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      },
      files: ['check.ts'],
    };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    writeFileSync(
      path.join(dir, 'check.ts'),
      `import { createClient, type CompactdClient, type Job } from 'compactd/client';
const client: CompactdClient = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'key' });
export async function tokensSaved(id: string): Promise<number> {
  const job: Job = await client.waitForJob(id);
  return job.status === 'completed' ? job.result.tokensBefore - job.result.tokensAfter : 0;
}
// @ts-expect-error the conversation id is a string
void client.getContext(42);
`,
    );
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const run = await execFileAsync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir }).catch(
      (error: { stdout: string; code: number }) => error,
    );
    expect(run.stdout).toBe('');
  });
});

describe('the compactd CLI from the tarball', () => {
  const dbName = `${TEST_DB_PREFIX}pack_${randomUUID().slice(0, 8)}`;

  afterAll(async () => {
    const admin = postgres(databaseUrl('postgres'), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  });

  it('runs compiled JavaScript with only the declared runtime dependencies and finds its migrations', async () => {
    const dir = scratchProject('cli');
    await unpackInto(dir);
    for (const dependency of Object.keys(manifest.dependencies)) linkFromCheckout(dir, dependency);
    const bin = path.join(dir, 'node_modules/compactd/bin/compactd.mjs');
    const help = await execFileAsync(process.execPath, [bin, 'help'], { cwd: dir });
    expect(help.stdout).toContain('usage: compactd <command>');

    const url = databaseUrl(dbName);
    await execFileAsync(process.execPath, [bin, 'migrate'], { cwd: dir, env: { ...process.env, DATABASE_URL: url } });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [applied] = await sql<{ n: number }[]>`select count(*)::int as n from drizzle.__drizzle_migrations`;
      const journal = JSON.parse(readFileSync(path.join(dir, 'node_modules/compactd/migrations/meta/_journal.json'), 'utf8')) as {
        entries: unknown[];
      };
      expect(applied?.n).toBe(journal.entries.length);
    } finally {
      await sql.end();
    }
  });
});
