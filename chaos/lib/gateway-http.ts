import { Agent, type OutgoingHttpHeaders, request } from 'node:http';

/**
 * Requests to the gateway over node:http, one socket each (lighter than fetch for a thousand
 * at once, and it sends any header a client may send: `connection`, `proxy-authorization`, …,
 * which fetch refuses or rewrites). Every request is bounded by `timeoutMs`; one that gets no
 * answer is an outcome with `status` 'timeout' or the socket's error, never a hang.
 */

export interface GatewayAnswer {
  /** HTTP status, or why there was none */
  status: number | string;
  headers: Record<string, string>;
  text: string;
  /** epoch ms when it was sent and when the answer ended */
  sentAt: number;
  answeredAt: number;
}

export interface GatewayRequest {
  path: string;
  body: string | Buffer;
  headers: OutgoingHttpHeaders;
  timeoutMs: number;
  /** aborting it closes the socket (a client that gives up) */
  signal?: AbortSignal;
}

/** One socket per request, no limit on how many are open. */
export const burstAgent = () => new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

export function sendGateway(baseUrl: string, agent: Agent, req: GatewayRequest): Promise<GatewayAnswer> {
  return new Promise((resolve) => {
    const sentAt = Date.now();
    let settled = false;
    const done = (status: number | string, headers: Record<string, string>, text: string) => {
      if (settled) return;
      settled = true;
      resolve({ status, headers, text, sentAt, answeredAt: Date.now() });
    };
    // An answer that arrives before the body is sent (a 413 on content-length) is the answer,
    // even when the server then closes the connection under the rest of the body.
    let answer: { status: number; headers: Record<string, string>; chunks: Buffer[] } | null = null;
    const fromAnswer = () => (answer ? done(answer.status, answer.headers, Buffer.concat(answer.chunks).toString('utf8')) : false);
    const outgoing = request(
      `${baseUrl}${req.path}`,
      {
        method: 'POST',
        agent,
        headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) },
        ...(req.signal ? { signal: req.signal } : {}),
      },
      (res) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        const seen = { status: res.statusCode ?? 0, headers, chunks: [] as Buffer[] };
        answer = seen;
        res.on('data', (chunk: Buffer) => seen.chunks.push(chunk));
        res.on('error', () => fromAnswer());
        res.on('end', () => fromAnswer());
      },
    );
    outgoing.setTimeout(req.timeoutMs, () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', (error) => {
      if (answer && error.name !== 'AbortError' && error.message !== 'timeout') {
        // the socket broke after the answer's head: give its body a moment to be read
        setTimeout(() => fromAnswer(), 50);
        return;
      }
      done(error.message === 'timeout' ? 'timeout' : error.name === 'AbortError' ? 'aborted' : error.message, {}, '');
    });
    outgoing.end(req.body);
  });
}

/** Statuses and their counts, `200×998, 429×2`. */
export function statusCounts(answers: ReadonlyArray<{ status: number | string }>): string {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(String(a.status), (counts.get(String(a.status)) ?? 0) + 1);
  return counts.size === 0
    ? 'none'
    : [...counts]
        .sort()
        .map(([status, n]) => `${status}×${n}`)
        .join(', ');
}
