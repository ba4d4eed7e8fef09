import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

import { foreignErrorsAsProblems } from '../../../src/api/protocol-errors.js';

describe('dashboard errors as problems', () => {
  it('answers an action on a job in another state as a 409 conflict, not a 500', async () => {
    const app = Fastify();
    app.addHook('onSend', foreignErrorsAsProblems);
    app.put('/promote', async (_request, reply) =>
      reply.status(500).send({ error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' }, message: 'Job 40d5 is not in the delayed state. promote' }),
    );
    app.put('/broken', async (_request, reply) =>
      reply.status(500).send({ error: { key: 'ERRORS.INTERNAL_SERVER_ERROR' }, message: 'Connection is closed.' }),
    );
    const conflict = await app.inject({ method: 'PUT', url: '/promote' });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.headers['content-type']).toContain('application/problem+json');
    expect(conflict.json()).toMatchObject({ status: 409, code: 'JOB_STATE_CONFLICT' });
    const failure = await app.inject({ method: 'PUT', url: '/broken' });
    expect(failure.statusCode).toBe(500);
    await app.close();
  });
});
