/**
 * Which Postgres and Redis the integration and e2e tests use, decided per service: the URL
 * given in the environment (DATABASE_URL / REDIS_URL, used as given: a wrong one fails
 * loudly, never falls back), else the local default when something answers there, else a
 * container started with testcontainers when a container runtime is reachable. With none of
 * these the run stops with one message naming both ways to get services.
 */

export type ServiceName = 'postgres' | 'redis';

export interface ServiceFacts {
  env: { DATABASE_URL?: string | undefined; REDIS_URL?: string | undefined };
  /** something answers on 127.0.0.1:5432 / 127.0.0.1:6379 */
  localAnswers: Record<ServiceName, boolean>;
  /** a Docker-compatible container runtime is reachable */
  containerRuntime: boolean;
}

export type ServiceSource = { kind: 'env'; url: string } | { kind: 'local'; url: string } | { kind: 'container' };

export type ServicePlan = { ok: true; postgres: ServiceSource; redis: ServiceSource } | { ok: false; message: string };

export const LOCAL_URLS: Record<ServiceName, string> = {
  postgres: 'postgres://postgres@127.0.0.1:5432/compactd_test',
  redis: 'redis://127.0.0.1:6379',
};

const ENV_NAMES: Record<ServiceName, 'DATABASE_URL' | 'REDIS_URL'> = { postgres: 'DATABASE_URL', redis: 'REDIS_URL' };

function sourceOf(name: ServiceName, facts: ServiceFacts): ServiceSource | null {
  const given = facts.env[ENV_NAMES[name]];
  if (given) return { kind: 'env', url: given };
  if (facts.localAnswers[name]) return { kind: 'local', url: LOCAL_URLS[name] };
  return facts.containerRuntime ? { kind: 'container' } : null;
}

export function planServices(facts: ServiceFacts): ServicePlan {
  const postgres = sourceOf('postgres', facts);
  const redis = sourceOf('redis', facts);
  if (postgres && redis) return { ok: true, postgres, redis };
  const missing = [postgres ? null : 'Postgres (127.0.0.1:5432)', redis ? null : 'Redis (127.0.0.1:6379)'].filter((m) => m !== null);
  return {
    ok: false,
    message:
      `integration and e2e tests need Postgres and Redis; nothing answers for ${missing.join(' and ')} and no container runtime was found. ` +
      'Either run them locally (or set DATABASE_URL / REDIS_URL to running ones), or start Docker so the tests start both with testcontainers.',
  };
}

/** The one line a run prints about where its services come from. */
export function describePlan(plan: Extract<ServicePlan, { ok: true }>): string {
  const where = (name: string, source: ServiceSource) =>
    source.kind === 'env'
      ? `${name} from ${name === 'Postgres' ? 'DATABASE_URL' : 'REDIS_URL'}`
      : source.kind === 'local'
        ? `${name} on the local default`
        : `${name} in a testcontainers container`;
  return `test services: ${where('Postgres', plan.postgres)}, ${where('Redis', plan.redis)}`;
}
