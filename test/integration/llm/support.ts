import { SECTIONS } from '../../../src/compaction/summarize/index.js';

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
