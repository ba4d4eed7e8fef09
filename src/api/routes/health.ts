import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';

import type { ApiDeps } from '../deps.js';

const READY_TIMEOUT_MS = 2_000;

async function probe(name: string, check: () => Promise<unknown>): Promise<[string, 'ok' | string]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      }),
    ]);
    return [name, 'ok'];
  } catch (error) {
    return [name, error instanceof Error ? error.message : 'unavailable'];
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/healthz',
      { schema: { tags: ['health'], summary: 'Liveness', response: { 200: z.object({ status: z.literal('ok') }) } } },
      async () => ({
        status: 'ok' as const,
      }),
    );

    app.get(
      '/readyz',
      {
        schema: {
          tags: ['health'],
          summary: 'Readiness: Postgres and Redis reachable',
          response: {
            200: z.object({ status: z.string(), checks: z.record(z.string(), z.string()) }),
            503: z.object({ status: z.string(), checks: z.record(z.string(), z.string()) }),
          },
        },
      },
      async (_request, reply) => {
        const checks = Object.fromEntries(
          await Promise.all([probe('postgres', () => deps.sql`select 1`), probe('redis', () => deps.redis.ping())]),
        );
        const ready = Object.values(checks).every((v) => v === 'ok');
        return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
      },
    );
  };
}
