import { SECTIONS } from '../../../src/compaction/prompt.js';

/** Small helpers shared by the LLM integration tests. */

export const SECTION_HEADINGS = SECTIONS.map((name) => `## ${name}`);

/** The rejection of a promise that must reject (fails the test if it resolves). */
export async function captureError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Polls a condition (cheap, in-process) until it holds; never a fixed sleep. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
