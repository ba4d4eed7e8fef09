import { describe, expect, it } from 'vitest';

import { describePlan, LOCAL_URLS, planServices, type ServiceFacts } from '../../../harness/service-plan.js';

const facts = (over: Partial<ServiceFacts> = {}): ServiceFacts => ({
  env: {},
  localAnswers: { postgres: false, redis: false },
  containerRuntime: false,
  ...over,
});

describe('where the tests get Postgres and Redis', () => {
  it('uses the URLs given in the environment, even when local services answer and Docker is there', () => {
    const plan = planServices(
      facts({
        env: { DATABASE_URL: 'postgres://u@db:5432/x', REDIS_URL: 'redis://cache:6379' },
        localAnswers: { postgres: true, redis: true },
        containerRuntime: true,
      }),
    );
    expect(plan).toEqual({
      ok: true,
      postgres: { kind: 'env', url: 'postgres://u@db:5432/x' },
      redis: { kind: 'env', url: 'redis://cache:6379' },
    });
  });

  it('uses the local defaults when they answer, without starting containers', () => {
    const plan = planServices(facts({ localAnswers: { postgres: true, redis: true }, containerRuntime: true }));
    expect(plan).toEqual({
      ok: true,
      postgres: { kind: 'local', url: LOCAL_URLS.postgres },
      redis: { kind: 'local', url: LOCAL_URLS.redis },
    });
  });

  it('starts containers only for what is missing', () => {
    const plan = planServices(facts({ env: { REDIS_URL: 'redis://cache:6379' }, containerRuntime: true }));
    expect(plan).toEqual({ ok: true, postgres: { kind: 'container' }, redis: { kind: 'env', url: 'redis://cache:6379' } });
    const mixed = planServices(facts({ localAnswers: { postgres: true, redis: false }, containerRuntime: true }));
    expect(mixed).toMatchObject({ postgres: { kind: 'local' }, redis: { kind: 'container' } });
  });

  it('with neither services nor Docker, fails with one message naming both ways', () => {
    const plan = planServices(facts({ localAnswers: { postgres: true, redis: false } }));
    expect(plan.ok).toBe(false);
    const message = (plan as { message: string }).message;
    expect(message).toContain('Redis (127.0.0.1:6379)');
    expect(message).not.toContain('Postgres (127.0.0.1:5432)');
    expect(message).toContain('DATABASE_URL / REDIS_URL');
    expect(message).toContain('testcontainers');
    expect(message.split('\n')).toHaveLength(1);
  });

  it('says where each service comes from in one line', () => {
    const line = describePlan({ ok: true, postgres: { kind: 'container' }, redis: { kind: 'local', url: LOCAL_URLS.redis } });
    expect(line).toBe('test services: Postgres in a testcontainers container, Redis on the local default');
  });
});
