import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startTestLlmSim, type TestLlmSim } from '../../../harness/llm-sim.js';
import { waitFor } from '../../../harness/wait-for.js';
import type { SummarizeRequest } from '../../../src/compaction/types.js';
import { createAnthropicSummarizer } from '../../../src/llm/anthropic.js';
import { createLocalSummarizer } from '../../../src/llm/local.js';
import { createOpenAISummarizer } from '../../../src/llm/openai.js';
import { LlmError, type Summarizer } from '../../../src/llm/port.js';
import { withResilience } from '../../../src/llm/resilient.js';
import { isRetryable } from '../../../src/llm/retry.js';
import type { CallRecord } from '../../../src/llm-sim/state.js';
import { captureError, SECTION_HEADINGS } from './support.js';

/**
 * One conformance suite for every Summarizer (STYLE §9): the same cases run against the
 * Anthropic and OpenAI adapters — through the official SDKs, over HTTP, to an in-process
 * llm-sim — and the local adapter. Cases that need a wire (faults, shapes) run for the
 * network adapters; the port contract runs for all three.
 */

let sim: TestLlmSim;
beforeAll(async () => {
  sim = await startTestLlmSim();
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.control.reset();
  sim.control.configure({ profile: 'instant', faults: {}, lossRate: 0, summarizeWindow: null, promptCache: {} });
});

const REQUEST: SummarizeRequest = {
  system: 'You summarize agent conversations.',
  messages: [
    { role: 'system', content: 'Previous summary: the build of src/server/index.ts was fixed.' },
    { role: 'system', content: 'Second context note: ticket OPS-4711 is open.' },
    { role: 'user', content: 'Please fix the failing test in test/unit/parser.test.ts. We must never touch migrations/0001_init.sql.' },
    { role: 'assistant', content: 'Ran npm test: Error: Expected 3 tokens but got 2 in src/parser.ts.' },
    { role: 'assistant', content: 'We decided to rewrite the tokenizer loop instead of patching it.' },
    { role: 'user', content: 'Summarize the conversation above in the seven sections.' },
  ],
  maxOutputTokens: 800,
};

interface Driver {
  name: 'anthropic' | 'openai' | 'local';
  model: string;
  network: boolean;
  make(options?: { timeoutMs?: number }): Summarizer;
}

const DRIVERS: Driver[] = [
  {
    name: 'anthropic',
    model: 'claude-haiku-4-5',
    network: true,
    make: (o = {}) => createAnthropicSummarizer({ apiKey: 'test-key', baseURL: sim.url, timeoutMs: o.timeoutMs }),
  },
  {
    name: 'openai',
    model: 'gpt-4o-mini',
    network: true,
    make: (o = {}) => createOpenAISummarizer({ apiKey: 'test-key', baseURL: sim.openaiBaseUrl, timeoutMs: o.timeoutMs }),
  },
  { name: 'local', model: 'local', network: false, make: () => createLocalSummarizer({ countTokens }) },
];

const FAST_POLICY = { baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 60_000 };
const calls = (): CallRecord[] => sim.control.callLog();

describe.each(DRIVERS)('Summarizer conformance: $name', (driver) => {
  it('returns a seven-section summary with usage, model and latency', async () => {
    const result = await driver.make().summarize(REQUEST, { model: driver.model });
    for (const heading of SECTION_HEADINGS) expect(result.text).toContain(heading);
    expect(result.text).toContain('test/unit/parser.test.ts');
    expect(result.stopReason).toBe('end');
    expect(result.model).toBe(driver.model);
    expect(result.usage.inputTokens).toBeGreaterThan(50);
    expect(result.usage.outputTokens).toBe(countTokens(result.text));
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(calls()).toHaveLength(driver.network ? 1 : 0);
  });

  it('rejects at once with cancelled when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await captureError(driver.make().summarize(REQUEST, { model: driver.model, signal: controller.signal }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe('cancelled');
    expect(isRetryable(error)).toBe(false);
    expect(calls()).toHaveLength(0);
  });
});

describe.each(DRIVERS.filter((d) => d.network))('Network adapter conformance: $name', (driver) => {
  it('reports usage as the provider does, cache reads and writes apart from plain input', async () => {
    sim.control.configure({ promptCache: { readTokens: 20, writeTokens: 7 } });
    const result = await driver.make().summarize(REQUEST, { model: driver.model });
    const [call] = calls();
    expect(result.usage).toEqual({
      inputTokens: (call?.inputTokens ?? 0) - 27,
      outputTokens: call?.outputTokens,
      cacheReadTokens: 20,
      cacheWriteTokens: 7,
    });
  });

  it.each([
    { fault: 'rate_limit', kind: 'rate_limit', retryable: true },
    { fault: 'overloaded', kind: 'overloaded', retryable: true },
    { fault: 'server_error', kind: 'server', retryable: true },
    { fault: 'auth', kind: 'auth', retryable: false },
    { fault: 'empty', kind: 'invalid_output', retryable: true },
    { fault: 'malformed', kind: 'invalid_output', retryable: true },
    { fault: 'truncated', kind: 'invalid_output', retryable: false },
  ] as const)('maps the $fault fault to $kind (retryable: $retryable)', async ({ fault, kind, retryable }) => {
    sim.control.setFaults({ script: [fault], retryAfterMs: 1500 });
    const error = await captureError(driver.make().summarize(REQUEST, { model: driver.model }));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe(kind);
    expect((error as LlmError).provider).toBe(driver.name);
    expect(isRetryable(error)).toBe(retryable);
    if (fault === 'rate_limit') expect((error as LlmError).retryAfterMs).toBe(1500);
    expect(calls()).toHaveLength(1);
  });

  it('maps a context-length 400 to a final bad_request', async () => {
    sim.control.configure({ summarizeWindow: 50 });
    const error = await captureError(driver.make().summarize(REQUEST, { model: driver.model }));
    expect((error as LlmError).kind).toBe('bad_request');
    expect((error as LlmError).code).toBe('LLM_CONTEXT_TOO_LONG');
    expect(isRetryable(error)).toBe(false);
  });

  it.each(['ms', 'seconds'] as const)('waits out retry-after (%s header) before the next attempt', async (header) => {
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 400, retryAfterHeader: header });
    const summarizer = withResilience(driver.make(), { maxAttempts: 3, timeoutMs: 5_000, policy: FAST_POLICY });
    await summarizer.summarize(REQUEST, { model: driver.model });
    const [first, second] = calls();
    const waitedMs = (second?.startMs ?? 0) - (first?.endMs ?? 0);
    const askedMs = header === 'ms' ? 400 : 1_000; // `retry-after: 1` is whole seconds
    expect(calls()).toHaveLength(2);
    expect(waitedMs).toBeGreaterThanOrEqual(askedMs - 5);
    expect(waitedMs).toBeLessThan(askedMs * 1.1 + 500);
  });

  it('makes at most maxAttempts calls, then rethrows the last error', async () => {
    sim.control.setFaults({ script: ['server_error', 'overloaded', 'server_error', 'server_error', 'none'] });
    const summarizer = withResilience(driver.make(), { maxAttempts: 3, timeoutMs: 5_000, policy: FAST_POLICY });
    const error = await captureError(summarizer.summarize(REQUEST, { model: driver.model }));
    expect((error as LlmError).kind).toBe('server');
    expect(calls()).toHaveLength(3);
  });

  it('recovers from a transient fault on the next attempt', async () => {
    sim.control.setFaults({ script: ['overloaded', 'empty'] });
    const summarizer = withResilience(driver.make(), { maxAttempts: 3, timeoutMs: 5_000, policy: FAST_POLICY });
    const result = await summarizer.summarize(REQUEST, { model: driver.model });
    expect(result.text).toContain('## TASK STATE');
    expect(calls().map((c) => c.fault)).toEqual(['overloaded', 'empty', null]);
  });

  it('does not retry final errors', async () => {
    sim.control.setFaults({ script: ['truncated', 'none'] });
    const summarizer = withResilience(driver.make(), { maxAttempts: 4, timeoutMs: 5_000, policy: FAST_POLICY });
    const error = await captureError(summarizer.summarize(REQUEST, { model: driver.model }));
    expect((error as LlmError).code).toBe('LLM_OUTPUT_TRUNCATED');
    expect(calls()).toHaveLength(1);
  });

  it('cancels an in-flight call when the signal aborts', async () => {
    sim.control.setProfile('fixed:10000');
    const controller = new AbortController();
    const pending = captureError(driver.make().summarize(REQUEST, { model: driver.model, signal: controller.signal }));
    await waitFor(() => sim.control.inFlight() === 1, 5_000);
    const abortedAt = performance.now();
    controller.abort();
    const error = await pending;
    expect((error as LlmError).kind).toBe('cancelled');
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
    await waitFor(() => calls()[0]?.outcome === 'disconnected', 5_000);
  });

  it('cancels during a retry wait without another attempt', async () => {
    sim.control.setFaults({ script: ['rate_limit'], retryAfterMs: 10_000 });
    const controller = new AbortController();
    const summarizer = withResilience(driver.make(), { maxAttempts: 3, timeoutMs: 5_000, policy: FAST_POLICY });
    const pending = captureError(summarizer.summarize(REQUEST, { model: driver.model, signal: controller.signal }));
    await waitFor(() => calls()[0]?.endMs != null, 5_000);
    controller.abort();
    expect(((await pending) as LlmError).kind).toBe('cancelled');
    expect(calls()).toHaveLength(1);
  });

  it('times out a hanging call after timeoutMs, as a retryable timeout', async () => {
    sim.control.setFaults({ script: ['hang'] });
    const startedAt = performance.now();
    const error = await captureError(driver.make({ timeoutMs: 30_000 }).summarize(REQUEST, { model: driver.model, timeoutMs: 300 }));
    const elapsedMs = performance.now() - startedAt;
    expect((error as LlmError).kind).toBe('timeout');
    expect(isRetryable(error)).toBe(true);
    expect(elapsedMs).toBeGreaterThanOrEqual(290);
    expect(elapsedMs).toBeLessThan(2_000);
    await waitFor(() => calls()[0]?.outcome === 'disconnected', 5_000);
  });
});
