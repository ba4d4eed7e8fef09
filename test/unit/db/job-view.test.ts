import { describe, expect, it } from 'vitest';

import { JobSchema } from '../../../src/api/schemas/jobs.js';
import { toJobView } from '../../../src/api/views.js';
import { jobEventData } from '../../../src/db/repos/job-outbox.js';
import type { JobRow } from '../../../src/db/repos/jobs.js';

const row: JobRow = {
  id: '0b7f3c7e-3f38-4d2c-9b8e-2f4f0a6d1c11',
  tenantId: '5a1d7c2e-8f11-4b6a-a0c3-1d2e3f4a5b6c',
  conversationId: '9c8b7a6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  status: 'completed',
  trigger: 'api',
  options: { strategy: 'summarize', keepRecent: 4 },
  watermark: 42,
  plan: { internal: true },
  policy: { auto: false },
  progress: { chunksDone: 3, chunksTotal: 3 },
  result: { tokensBefore: 7000, tokensAfter: 1400 },
  error: null,
  attempts: 1,
  idempotencyKey: 'key-1',
  createdAt: new Date('2026-11-23T10:00:00.000Z'),
  startedAt: new Date('2026-11-23T10:00:01.000Z'),
  finishedAt: null,
  updatedAt: new Date('2026-11-23T10:00:05.000Z'),
};

describe('the job a webhook event carries', () => {
  it('is the job GET /v1/jobs/:id shows, valid against its schema, with nothing internal', () => {
    const { job } = jobEventData(row, 'conv-1');
    expect(job).toEqual(toJobView(row, 'conv-1'));
    expect(JobSchema.parse(job)).toEqual(job);
    for (const internal of ['tenantId', 'plan', 'policy', 'watermark', 'attempts', 'idempotencyKey', 'updatedAt'])
      expect(job).not.toHaveProperty(internal);
  });
});
