import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The bounds on connections (docs/server.md, "Security"): node:http's header, request and
 * keep-alive timeouts, so that a client that sends part of a request and stops (slowloris) is
 * answered 408 and closed within `requestTimeoutMs` + `checkEveryMs`, and a cap on open
 * connections. At the cap, a new connection closes the oldest one that has no request being
 * answered (an idle keep-alive socket, or one that never finished its request); only when every
 * connection is answering a request is the new one closed instead. So a thousand idle sockets
 * hold at most `maxConnections` slots and never keep a real request out.
 */
export interface ConnectionLimits {
  maxConnections: number;
  /** The whole header must arrive within this (ms). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (ms); the answer is not bounded by it. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (ms). */
  keepAliveTimeoutMs: number;
  /** How often node:http checks the two timeouts above (ms). */
  checkEveryMs: number;
}

export const CONNECTION_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  checkEveryMs: 1_000,
} as const;

/** The `createServer` options for these limits. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkEveryMs,
    // A request without Host gets the guard's 403 in the contract's shape, not node:http's bare 400.
    requireHostHeader: false,
  };
}

/** Applies the cap to `server`; returns how many connections it closed to make room or refuse (for tests and logs). */
export function capConnections(server: Server, maxConnections: number): { evicted: () => number; open: () => number } {
  /** Open sockets, oldest first, with the requests each is answering. */
  const open = new Map<Socket, number>();
  let evicted = 0;
  server.on('connection', (socket: Socket) => {
    open.set(socket, 0);
    socket.once('close', () => open.delete(socket));
    if (open.size <= maxConnections) return;
    evicted += 1;
    for (const [s, busy] of open) {
      if (busy === 0 && s !== socket) {
        open.delete(s);
        s.destroy();
        return;
      }
    }
    open.delete(socket);
    socket.destroy();
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    if (!open.has(socket)) return;
    open.set(socket, (open.get(socket) ?? 0) + 1);
    res.once('close', () => {
      if (open.has(socket)) open.set(socket, Math.max(0, (open.get(socket) ?? 1) - 1));
    });
  });
  return { evicted: () => evicted, open: () => open.size };
}
