import { parentPort } from 'node:worker_threads';

import { countTokens } from '../lib/count-tokens.js';

/**
 * Entry of a token-count thread (token-count-pool.ts): counts each text it is sent with the
 * same function the API would run inline, so the number stored is the same either way.
 */
export interface CountRequest {
  id: number;
  text: string;
}
export interface CountReply {
  id: number;
  tokens?: number;
  error?: string;
}

// Texts come in batches (one message per batch, not per text): an append of 500 messages is a
// few round trips between the threads, not 500.
parentPort?.on('message', (batch: CountRequest[]) => {
  parentPort?.postMessage(
    batch.map(({ id, text }): CountReply => {
      try {
        return { id, tokens: countTokens(text) };
      } catch (error) {
        return { id, error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
});
