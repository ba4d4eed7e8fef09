import { Socket } from 'node:net';

import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * How long the rest of an unread body may keep arriving after the answer went out. nginx's
 * `lingering_time` default: a 32 MB body over a slow uplink (10 Mbit/s) still arrives in time;
 * a client that keeps sending past it loses its connection, having had its answer long ago.
 */
export const UNREAD_BODY_DRAIN_MS = 30_000;

/** Node's message says whether its body arrived whole; `app.inject()`'s stand-in says nothing, and its body is all there. */
const isUnread = (request: FastifyRequest): boolean => request.raw.complete === false;

/**
 * An answer sent before the request's body arrived (a 413 for a body whose content-length
 * is over the limit is answered before its first byte is read) reaches the client.
 *
 * fastify marks such an answer `connection: close`, and Node then closes the socket as soon
 * as the answer is written, with the body still coming: the unread bytes make the kernel reset
 * the connection, and a client still writing its body gets EPIPE or ECONNRESET instead of the
 * answer (a 20 MB append written as the socket takes it: every time, over loopback). Without
 * the header, Node keeps the connection and reads the rest of the body into nothing, so the
 * client finishes sending and reads the answer; the drain is bounded by `UNREAD_BODY_DRAIN_MS`,
 * and shutdown ends it.
 * A client that itself asked for `connection: close` lingers the same way (as nginx's lingering
 * close does): Node would close on it at once, and the reset reaches it before the answer on a
 * busy host. It closes the connection itself once it has the answer.
 */
export function unreadBodyHooks(drainMs = UNREAD_BODY_DRAIN_MS) {
  const draining = new Set<Socket>();
  return {
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (!isUnread(request)) return payload;
      if (String(reply.getHeader('connection') ?? '').toLowerCase() === 'close') reply.removeHeader('connection');
      // Node keeps the socket, and reads what is left of the body, only for a kept-alive answer
      reply.raw.shouldKeepAlive = true;
      return payload;
    },

    onResponse: async (request: FastifyRequest) => {
      const incoming = request.raw;
      const socket = incoming.socket;
      if (!isUnread(request) || !(socket instanceof Socket) || socket.destroyed) return;
      draining.add(socket);
      const timer = setTimeout(() => socket.destroy(), drainMs);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        draining.delete(socket);
        incoming.off('end', done);
        socket.off('close', done);
      };
      incoming.once('end', done);
      // a kept connection outlives its requests: the listener goes with the drain
      socket.once('close', done);
    },

    // Shutdown does not wait out a drain: the answers went out already.
    preClose: async () => {
      for (const socket of draining) socket.destroy();
      draining.clear();
    },
  };
}
