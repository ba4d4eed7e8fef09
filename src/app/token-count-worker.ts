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

parentPort?.on('message', ({ id, text }: CountRequest) => {
  let reply: CountReply;
  try {
    reply = { id, tokens: countTokens(text) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(reply);
});
