import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { beforeAll, describe, expect, it } from 'vitest';

import { parseLlmSimArgs } from '../../../src/app/cli/llm-sim.js';
import { EnvSchema, loadConfig } from '../../../src/config/env.js';
import { parseYamlSubset, type YamlValue } from './yaml-subset.js';

/**
 * No Docker engine here: the compose file and the Dockerfile are checked by reading them.
 * Service names, every environment variable (against EnvSchema), commands (against the
 * CLI's own usage) and the wiring between services must line up.
 */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');
const packageJson = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };

type Service = {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, YamlValue>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  profiles?: string[];
  deploy?: { replicas?: number };
  healthcheck?: { test: string[] };
  restart?: string;
};

const compose = parseYamlSubset(read('docker-compose.yml')) as { services: Record<string, Service>; volumes: Record<string, null> };
const services = compose.services;
const compactdServices = Object.entries(services).filter(([, s]) => s.image === 'compactd:local');

/** Resolves compose interpolation as `docker compose` does with an empty shell environment. */
function interpolate(value: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g, (_match, _name: string, fallback?: string) => fallback ?? '');
}

function environmentOf(service: Service): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v ?? ''))]));
}

let cliCommands: string[];
beforeAll(async () => {
  // The commands the real binary lists in its usage, not a copy of them.
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, 'bin/compactd.mjs'), 'help'], { cwd: repoRoot });
  cliCommands = [...stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1] as string);
});

describe('docker-compose.yml', () => {
  it('has the services users expect, compactd ones from one image built here', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'llm-sim', 'migrate', 'postgres', 'redis', 'worker']);
    expect(compactdServices.map(([name]) => name).sort()).toEqual(['api', 'llm-sim', 'migrate', 'worker']);
    for (const [, service] of compactdServices) expect(service.build).toBe('.');
    expect(cliCommands).toEqual(expect.arrayContaining(['start', 'api', 'worker', 'migrate', 'llm-sim', 'demo', 'import', 'compact']));
  });

  it('runs only real compactd subcommands, llm-sim with options its parser accepts', () => {
    for (const [name, service] of compactdServices) {
      const [command, ...args] = service.command ?? [];
      expect(cliCommands, `${name}: ${command}`).toContain(command);
      if (command === 'llm-sim') {
        const parsed = parseLlmSimArgs(args);
        expect(parsed).toMatchObject({ host: '0.0.0.0', port: 8090, profile: 'haiku' });
      } else {
        expect(args, name).toEqual([]);
      }
    }
    expect(services['llm-sim']!.profiles).toEqual(['llm-sim']);
  });

  it('sets only variables EnvSchema knows, with values loadConfig accepts', () => {
    const known = new Set(Object.keys(EnvSchema.shape));
    for (const [name, service] of compactdServices) {
      const env = environmentOf(service);
      for (const variable of Object.keys(env)) expect(known.has(variable), `${name}: ${variable} is not in EnvSchema`).toBe(true);
      expect(() => loadConfig(env), name).not.toThrow();
    }
    const api = loadConfig(environmentOf(services['api']!));
    expect(api.host).toBe('0.0.0.0');
    expect(services['api']!.ports).toEqual([`127.0.0.1:${api.port}:${api.port}`]);
    expect(api.bootstrapKey).toBeDefined();
    expect(loadConfig(environmentOf(services['worker']!)).summarizer.provider).toBe('local');
  });

  it('points DATABASE_URL at the postgres service with its credentials, REDIS_URL at redis', () => {
    const pg = environmentOf(services['postgres']!);
    for (const name of ['migrate', 'api', 'worker']) {
      const config = loadConfig(environmentOf(services[name]!));
      const db = new URL(config.databaseUrl);
      expect([db.hostname, db.port, db.username, db.password, db.pathname], name).toEqual([
        'postgres',
        '5432',
        pg['POSTGRES_USER'],
        pg['POSTGRES_PASSWORD'],
        `/${pg['POSTGRES_DB']}`,
      ]);
      if (name !== 'migrate') expect(new URL(config.redisUrl).hostname, name).toBe('redis');
    }
  });

  it('keeps queues safe in Redis (noeviction, AOF) and data on named volumes', () => {
    const redis = services['redis']!.command!.join(' ');
    expect(redis).toContain('--maxmemory-policy noeviction');
    expect(redis).toContain('--appendonly yes');
    expect(services['postgres']!.volumes).toEqual(['pgdata:/var/lib/postgresql/data']);
    expect(services['redis']!.volumes).toEqual(['redisdata:/data']);
    expect(Object.keys(compose.volumes).sort()).toEqual(['pgdata', 'redisdata']);
  });

  it('migrates once before api and workers start; two workers by default', () => {
    expect(services['migrate']).toMatchObject({ restart: 'no', depends_on: { postgres: { condition: 'service_healthy' } } });
    for (const name of ['api', 'worker']) {
      expect(services[name]!.depends_on, name).toEqual({
        migrate: { condition: 'service_completed_successfully' },
        redis: { condition: 'service_healthy' },
      });
    }
    expect(services['worker']!.deploy?.replicas).toBe(2);
    for (const name of ['postgres', 'redis']) expect(services[name]!.healthcheck?.test[0], name).toBe('CMD');
    expect(services['api']!.healthcheck!.test.join(' ')).toContain('/readyz');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages = instructions.reduce<string[][]>(
    (all, line) => (line.startsWith('FROM ') ? [...all, [line]] : (all.at(-1)?.push(line), all)),
    [],
  );

  it('compiles in one stage, installs runtime dependencies in another, runs compiled JavaScript from a slim Node 22 one', () => {
    expect(stages.length).toBe(3);
    const [build, deps, runtime] = stages as [string[], string[], string[]];
    expect(build[0]).toMatch(/^FROM node:22[\w.-]* AS build$/);
    expect(build.some((l) => /^RUN npm ci\b/.test(l))).toBe(true);
    expect(build).toContain('RUN npm run build');
    expect(deps[0]).toMatch(/^FROM node:22[\w.-]* AS deps$/);
    expect(deps.find((l) => /^RUN npm ci\b/.test(l))).toContain('--omit=dev');
    expect(runtime[0]).toMatch(/^FROM node:22[\w.-]*-slim\b/);
    expect(runtime).toContain('COPY --from=deps --chown=node:node /app/node_modules ./node_modules');
    expect(runtime).toContain('COPY --from=build --chown=node:node /app/dist ./dist');
    // No TypeScript in the image: no sources, no tsconfig, and the runtime install has no tsx.
    expect(runtime.filter((l) => l.startsWith('COPY ')).join('\n')).not.toMatch(/\bsrc\b|tsconfig/);
    expect(Object.keys(packageJson.dependencies)).not.toContain('tsx');
    expect(runtime).toContain('USER node');
    expect(runtime).toContain('ENTRYPOINT ["node", "bin/compactd.mjs"]');
    expect(read('bin/compactd.mjs')).toContain("'../dist/main.js'");
    const cmd = JSON.parse(runtime.find((l) => l.startsWith('CMD '))!.slice(4)) as string[];
    expect(cliCommands).toContain(cmd[0]);
  });

  it('applies the dependency patches to the runtime install (its scripts are skipped, so it runs patch-package itself)', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    expect(pkg.scripts['postinstall']).toMatch(/^patch-package\b/);
    expect(Object.keys(pkg.dependencies)).toContain('patch-package');
    const deps = stages.find((stage) => stage.some((l) => /^RUN npm ci\b.*--omit=dev/.test(l)))!;
    const copyPatches = deps.findIndex((l) => /^COPY patches \.\/patches$/.test(l));
    const install = deps.findIndex((l) => /^RUN npm ci\b/.test(l));
    expect(copyPatches).toBeGreaterThan(-1);
    expect(copyPatches).toBeLessThan(install);
    expect(deps[install]).toMatch(/&& npx patch-package --error-on-fail$/);
  });

  it('copies only paths that exist, and sets only known variables', () => {
    for (const line of instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from='))) {
      const parts = line
        .split(/\s+/)
        .slice(1)
        .filter((p) => !p.startsWith('--'));
      for (const source of parts.slice(0, -1)) expect(existsSync(path.join(repoRoot, source)), source).toBe(true);
    }
    const known = new Set(Object.keys(EnvSchema.shape));
    for (const line of instructions.filter((l) => l.startsWith('ENV '))) expect(known.has(line.slice(4).split('=')[0]!)).toBe(true);
  });

  it('keeps node_modules, dist, tests and .git out of the build context', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    expect(ignore).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'test']));
    for (const needed of ['src', 'samples', 'migrations', 'bin', 'tsconfig.json', 'tsconfig.build.json'])
      expect(ignore).not.toContain(needed);
  });
});
