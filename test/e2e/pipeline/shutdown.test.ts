import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadRealTranscript } from '../../../harness/transcripts.js';
import { waitFor } from '../../../harness/wait-for.js';
import { compact, seedConversation, waitForJob } from '../../helpers/conversation.js';
import { createWorkerFleet, type WorkerFleet } from '../../helpers/worker-fleet.js';

let fleet: WorkerFleet;
let sim: WorkerFleet['sim'];
let stack: WorkerFleet['stack'];
const startWorker = () => fleet.startWorker();

beforeAll(async () => {
  fleet = await createWorkerFleet();
  ({ sim, stack } = fleet);
});
afterAll(async () => {
  await fleet?.close();
});

describe('graceful shutdown of a worker (SIGTERM)', () => {
  it('stops taking jobs, lets in-flight summarize steps finish, exits 143; another worker finishes the job', async () => {
    sim.control.setProfile('fixed:2000');
    const messages = loadRealTranscript('spotter-claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl').conversations[0]!.messages;
    await seedConversation(stack, 'sigterm', messages, { policy: { auto: false, summaryMaxTokens: 4000 } });
    const first = startWorker();
    const job = await compact(stack, 'sigterm', { strategy: 'summarize' });
    await waitFor(() => sim.control.inFlight() > 0, 60_000, 20);
    const inFlightAtSignal = sim.control
      .callLog()
      .filter((c) => c.outcome === 'pending')
      .map((c) => c.id);
    first.kill('SIGTERM');
    expect(await first.exited).toBe(143);
    // every call in flight at the signal was allowed to finish, none was cut off
    const calls = sim.control.callLog();
    for (const id of inFlightAtSignal) expect(calls.find((c) => c.id === id)?.outcome).toBe('ok');
    expect(first.output()).toContain('shutting down');

    startWorker();
    const done = await waitForJob(stack, job.id, 90_000);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const bodies = sim.control
      .callLog()
      .filter((c) => c.outcome === 'ok')
      .map((c) => JSON.stringify(c.body));
    expect(new Set(bodies).size).toBe(bodies.length);
  });
});
