import { Readable } from 'node:stream';

import type { FastifyReply } from 'fastify';

import { type Answer, answerFromJson, createSseParser, streamAccumulator } from './answer.js';
import { redirectedUpstream, relayedHeaders, usesOperatorKey } from './upstream.js';
import { type GatewayWire, providerOfWire } from './wire.js';

/**
 * Sends the provider's answer to the client as it arrives: status, the headers of
 * `relayedHeaders` and body bytes unchanged (an SSE stream is written chunk by chunk, never
 * re-encoded), while the answer is read on the way. `onAnswer` gets the complete answer once
 * the client has it all; an answer cut short (client gone, upstream error mid-stream) is not
 * reported. A redirect is answered 502 (`redirectedUpstream`), never relayed.
 */
export function relayResponse(
  provider: GatewayWire,
  upstream: Response,
  reply: FastifyReply,
  onAnswer: (answer: Answer) => void,
  abort: AbortController,
): FastifyReply {
  const redirected = redirectedUpstream(providerOfWire(provider), upstream.status);
  if (redirected) {
    reply.request.log.warn({ status: upstream.status }, 'the provider answered with a redirect; not followed');
    // nothing of the redirect is read: its connection is released at once
    void upstream.body?.cancel().catch(() => undefined);
    return reply.status(redirected.status).send(redirected.body);
  }
  // the request's own headers say which key went upstream, as they did when upstreamHeaders chose it
  void reply.status(upstream.status).headers(relayedHeaders(upstream.headers, usesOperatorKey(reply.request.headers)));
  const streamed = (upstream.headers.get('content-type') ?? '').includes('text/event-stream');
  const body = upstream.body;
  if (!body) return reply.send();
  const chunks: Buffer[] = [];
  const accumulator = streamed ? streamAccumulator(provider) : null;
  const parser = accumulator ? createSseParser((data) => accumulator.onData(data)) : null;
  async function* relay(): AsyncGenerator<Buffer> {
    let complete = false;
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (parser) parser.push(bytes);
        else chunks.push(bytes);
        yield bytes;
      }
      complete = true;
    } finally {
      // the client went away: stop the provider's work too
      if (!complete) abort.abort();
    }
    if (upstream.status < 200 || upstream.status >= 300) return;
    let answer: Answer | null;
    if (parser && accumulator) {
      parser.end();
      answer = accumulator.result();
    } else {
      try {
        answer = answerFromJson(provider, JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        answer = null;
      }
    }
    if (answer) onAnswer(answer);
  }
  return reply.send(Readable.from(relay(), { objectMode: false }));
}
