import { randomUUID } from 'node:crypto';

import { liveTurn } from './corpus.js';
import type { Http } from './http.js';
import type { AppendLedger } from './invariants.js';

/**
 * Appends one short message at a steady rate to conversations that are being compacted,
 * recording every acknowledged message in the ledger. Each append carries its own
 * Idempotency-Key; with `retry`, a failed append (a service restarting) is sent again with
 * the same key until it is acknowledged or `retryForMs` passes, so it is stored once.
 */

export interface AppenderStats {
  acknowledged: number;
  /** appends never acknowledged (after retries, when enabled) */
  failed: number;
  /** attempts that failed and were sent again */
  retries: number;
  /** responses with status ≥ 500 seen (including retried ones) */
  serverErrors: number;
  /** of those, 500 Internal Server Error (an outage should be a 503 to retry) */
  internalErrors: number;
  firstError: string | null;
}

export interface Appender {
  stats: AppenderStats;
  stop(): Promise<AppenderStats>;
}

export function startAppender(
  http: Http,
  ledger: AppendLedger,
  pickConversation: () => string | null,
  options: { ratePerSecond: number; retry?: boolean; retryForMs?: number },
): Appender {
  const stats: AppenderStats = { acknowledged: 0, failed: 0, retries: 0, serverErrors: 0, internalErrors: 0, firstError: null };
  const intervalMs = 1_000 / options.ratePerSecond;
  let running = true;
  let n = 0;
  const inFlight = new Set<Promise<void>>();

  const appendOne = async (conversationId: string, i: number) => {
    const message = liveTurn(i);
    const key = randomUUID();
    const deadline = Date.now() + (options.retryForMs ?? 60_000);
    for (;;) {
      let failure: string;
      try {
        const res = await http.request('POST', `/v1/conversations/${conversationId}/messages`, {
          body: { messages: [message] },
          headers: { 'idempotency-key': key },
        });
        if (res.status === 201) {
          const seqs = res.json<{ messages: Array<{ seq: number }> }>().messages.map((m) => m.seq);
          ledger.record(conversationId, seqs, [message]);
          stats.acknowledged += 1;
          return;
        }
        if (res.status >= 500) stats.serverErrors += 1;
        if (res.status === 500) stats.internalErrors += 1;
        failure = `HTTP ${res.status} ${res.text.slice(0, 300)}`;
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      stats.firstError ??= failure;
      if (!options.retry || Date.now() > deadline) {
        stats.failed += 1;
        return;
      }
      stats.retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  const loop = (async () => {
    let next = Date.now();
    while (running) {
      const conversationId = pickConversation();
      if (conversationId !== null) {
        const pending = appendOne(conversationId, n++);
        inFlight.add(pending);
        void pending.finally(() => inFlight.delete(pending));
      }
      next += intervalMs;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
    }
  })();

  return {
    stats,
    async stop() {
      running = false;
      await loop;
      await Promise.all([...inFlight]);
      return stats;
    },
  };
}
