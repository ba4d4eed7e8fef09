import { type WhitespaceShape, whitespaceText } from '../../lib/abuse-texts.js';
import { liveTurn } from '../../lib/corpus.js';
import { apiCalls, fetchHttp } from '../../lib/http.js';
import { overlapping, readFigures, startReadProbe } from '../../lib/read-probe.js';
import { round } from '../../lib/result.js';
import { startChaosStack } from '../../lib/stack.js';
import { type AbuseContext, expectNoCrash, pause, stackOptions, TARGETS } from './common.js';

/**
 * A run of whitespace in one message (a pasted table, a padded log): the append is timed,
 * while another tenant reads its own conversation in a loop on the same API process. Token
 * counting that is quadratic in a run's length blocks the event loop, and every read waits.
 * Each shape gets a fresh API process: one still blocked by the last shape would be killed.
 */

export interface WhitespaceOptions {
  shapes: WhitespaceShape[];
  /** characters of whitespace in the message */
  chars: number;
  /** the append's bound (a slower append is reported at this length, as timed out) */
  appendTimeoutMs: number;
}

const LABEL: Record<WhitespaceShape, string> = { spaces: 'spaces', newlines: 'newlines', mixed: 'mixed whitespace and punctuation' };

export async function runWhitespace(ctx: AbuseContext, options: WhitespaceOptions): Promise<void> {
  const { rec } = ctx;
  const stack = await startChaosStack(stackOptions(ctx));
  const started = Date.now();
  try {
    let accepted = 0;
    for (const shape of options.shapes) {
      const label = `whitespace, ${options.chars / 1000}k ${LABEL[shape]}`;
      const api = await stack.startApi();
      const writer = apiCalls(fetchHttp(api.url, stack.keys.tenant, 30_000));
      const reader = apiCalls(fetchHttp(api.url, stack.keys.other, 30_000));
      await writer.createConversation(`ws-${shape}`, { policy: { auto: false } });
      await reader.createConversation(`ws-read-${shape}`, { policy: { auto: false } });
      await reader.append(
        `ws-read-${shape}`,
        Array.from({ length: 6 }, (_, i) => liveTurn(i)),
      );

      const probe = startReadProbe(api.url, stack.keys.other, `/v1/conversations/ws-read-${shape}/context`, {
        timeoutMs: options.appendTimeoutMs,
        everyMs: 50,
      });
      await pause(500);
      const message = { role: 'user', content: [{ type: 'text', text: whitespaceText(shape, options.chars) }] };
      const from = Date.now();
      const t0 = performance.now();
      let outcome: number | string;
      try {
        const res = await fetch(`${api.url}/v1/conversations/ws-${shape}/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${stack.keys.tenant}`, 'content-type': 'application/json' },
          body: JSON.stringify({ messages: [message] }),
          signal: AbortSignal.timeout(options.appendTimeoutMs),
        });
        await res.arrayBuffer();
        outcome = res.status;
      } catch (error) {
        outcome =
          (error as Error).name === 'TimeoutError' ? `no answer within ${options.appendTimeoutMs / 1000} s` : (error as Error).message;
      }
      const appendMs = performance.now() - t0;
      const until = Date.now();
      const reads = readFigures(overlapping(await probe.stop(), from, until));
      if (outcome === 201) accepted += 1;

      rec.figure(`${label}: append answered`, outcome);
      rec.expect(`${label}: append (ms)`, round(appendMs), '<=', TARGETS.appendMs);
      rec.figure(`${label}: other tenant's reads meanwhile (failed), p50 (ms)`, `${reads.reads} (${reads.failed}), ${reads.p50}`);
      rec.expect(`${label}: other tenant's read meanwhile, max (ms)`, reads.max, '<=', TARGETS.bystanderReadMaxMs);
      // An API still blocked by this message would hold the next shape's figures back.
      await api.process.kill('SIGKILL');
    }
    rec.expect('whitespace: messages accepted (201)', accepted, '==', options.shapes.length);
    expectNoCrash(rec, 'whitespace', stack, started);
    rec.note(
      `Whitespace: one \`compactd api\` process per shape (private Postgres and Redis). Tenant A appends one message holding ${options.chars} characters ` +
        `of ${options.shapes.map((s) => LABEL[s]).join(' / ')} between two words, while tenant B reads its own 6-message conversation's context every 50 ms ` +
        `(sent on schedule whether or not the last one answered, at most 50 in flight); B's reads in flight at any moment of the append are counted. The append is bounded at ${options.appendTimeoutMs / 1000} s.`,
    );
  } finally {
    await stack.close();
  }
}
