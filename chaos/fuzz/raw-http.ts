import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

import type { FastifyInstance } from 'fastify';

/**
 * Requests malformed at the HTTP level, which `app.inject` cannot send: written byte for byte
 * to a listening socket. Whatever the server answers must be < 500 and problem+json; closing
 * the connection without an answer (a body that never arrives) is fine.
 */

const CASES: Array<[string, (auth: string) => string | Buffer]> = [
  [
    'body shorter than content-length',
    (a) =>
      `POST /v1/conversations HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":"raw-short"}`,
  ],
  [
    'body longer than content-length',
    (a) => `POST /v1/conversations HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{"id":"raw-long"}`,
  ],
  [
    'content-length and chunked together',
    (a) =>
      `POST /v1/conversations HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
  ],
  [
    'bad chunk size',
    (a) =>
      `POST /v1/conversations HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
  ],
  [
    'negative content-length',
    (a) => `POST /v1/conversations HTTP/1.1\r\nHost: x\r\n${a}Content-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`,
  ],
  ['header with a control character', (a) => `GET /v1/conversations/world-a HTTP/1.1\r\nHost: x\r\n${a}X-Evil: a\u0001b\r\n\r\n`],
  ['obsolete line folding', (a) => `GET /v1/conversations/world-a HTTP/1.1\r\nHost: x\r\n${a}X-Folded: a\r\n b\r\n\r\n`],
  ['16 KB header', (a) => `GET /v1/conversations/world-a HTTP/1.1\r\nHost: x\r\n${a}X-Big: ${'h'.repeat(20_000)}\r\n\r\n`],
  ['invalid method', (a) => `FR0B /v1/conversations HTTP/1.1\r\nHost: x\r\n${a}\r\n`],
  ['HTTP/2.0 request line', (a) => `GET /healthz HTTP/2.0\r\nHost: x\r\n${a}\r\n`],
  ['bare LF line endings', (a) => `GET /v1/conversations/world-a HTTP/1.1\nHost: x\n${a.replace('\r\n', '\n')}\n`],
  [
    'raw 0xFF bytes in the path',
    (a) =>
      Buffer.concat([Buffer.from('GET /v1/conversations/'), Buffer.from([0xff, 0xfe]), Buffer.from(` HTTP/1.1\r\nHost: x\r\n${a}\r\n`)]),
  ],
  ['absolute-form target', (a) => `GET http://evil.example/v1/conversations/world-a HTTP/1.1\r\nHost: x\r\n${a}\r\n`],
  ['no Host header', (a) => `GET /v1/conversations/world-a HTTP/1.1\r\n${a}\r\n`],
  ['garbage', () => Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03])],
];

function exchange(port: number, payload: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString('latin1'));
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', done);
    socket.on('error', () => undefined);
    socket.write(payload, () => socket.end());
  });
}

export async function rawHttpBattery(app: FastifyInstance, auth = ''): Promise<{ sent: number; failures: string[]; answers: string[] }> {
  const address = (await app.listen({ host: '127.0.0.1', port: 0 }), app.server.address()) as AddressInfo;
  const failures: string[] = [];
  const answers: string[] = [];
  for (const [name, build] of CASES) {
    const answer = await exchange(address.port, build(auth ? `Authorization: Bearer ${auth}\r\n` : ''));
    // Several responses may come back (a request smuggled after a short body); judge each.
    for (const response of answer.split(/(?=HTTP\/1\.[01] \d{3})/).filter((r) => r.startsWith('HTTP/'))) {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1]);
      const contentType = /\r\ncontent-type: ([^\r\n]*)/i.exec(response)?.[1] ?? '';
      answers.push(String(status));
      if (status >= 500) failures.push(`raw ${name}: status ${status}`);
      else if (status >= 400 && !contentType.startsWith('application/problem+json'))
        failures.push(`raw ${name}: ${status} as ${contentType || 'no content type'}`);
    }
  }
  return { sent: CASES.length, failures, answers };
}
