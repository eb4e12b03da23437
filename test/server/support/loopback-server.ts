/**
 * The HTTP side of a loopback serving engine on 127.0.0.1: routes, a log of what was asked, and
 * the faults a test can turn on (down, slow, a status, a malformed reply).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { type: 'none' }
  /** Every request waits this long before it is answered. */
  | { type: 'slow'; ms: number }
  /** Every request (but /tokenize) is answered with this status, body and Retry-After. */
  | { type: 'status'; status: number; body?: unknown; retryAfter?: number }
  /** The reply body is passed through this function before it is sent. */
  | { type: 'mangle'; mangle: (body: unknown) => unknown }
  /** A streamed request gets a chunk every `ms` for as long as its client stays (a generation that never ends). */
  | { type: 'drip'; ms: number };

export interface Logged {
  path: string;
  body: Record<string, unknown>;
  /** Set when the client closed the connection before the answer was complete. */
  aborted: boolean;
  /** Milliseconds from the whole body received to the reply written (the engine's own time). */
  ms: number;
}

export type Route = (body: Record<string, unknown>, res: ServerResponse, req: IncomingMessage, log: Logged) => Promise<unknown | undefined>;

export interface LoopbackServer {
  url: string;
  log: Logged[];
  fault: Fault;
  /** Stops listening (the engine is "down": connections are refused); `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function loopbackServer(routes: Record<string, Route>): Promise<LoopbackServer> {
  const state: LoopbackServer = {
    url: '',
    log: [],
    fault: { type: 'none' },
    stop: async () => {},
    start: async () => {},
    close: async () => {},
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      res.writeHead(400).end('{"error":{"message":"bad json"}}');
      return;
    }
    const received = performance.now();
    const log: Logged = { path, body, aborted: false, ms: 0 };
    state.log.push(log);
    res.on('close', () => {
      if (!res.writableFinished) log.aborted = true;
    });
    const fault = state.fault;
    if (fault.type === 'slow') await new Promise((r) => setTimeout(r, fault.ms));
    if (fault.type === 'status' && path !== '/tokenize') {
      res.writeHead(fault.status, { 'Content-Type': 'application/json', ...(fault.retryAfter ? { 'Retry-After': String(fault.retryAfter) } : {}) });
      res.end(JSON.stringify(fault.body ?? { object: 'error', message: `status ${fault.status}`, type: 'Error', code: fault.status }));
      return;
    }
    if (fault.type === 'drip' && body['stream'] === true) {
      const sse = sseWriter(res);
      const chunk = (delta: Record<string, string>) => ({ id: 'chatcmpl-drip', object: 'chat.completion.chunk', created: 1, model: body['model'], choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] });
      sse.send(chunk({ role: 'assistant', content: '' }));
      const timer = setInterval(() => sse.send(chunk({ content: 'drip ' })), fault.ms);
      res.on('close', () => clearInterval(timer));
      return;
    }
    const route = routes[path];
    if (!route) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ detail: 'Not Found' }));
      return;
    }
    try {
      const reply = await route(body, res, req, log);
      if (reply === undefined) return; // the route wrote its own (streamed) answer
      const out = fault.type === 'mangle' ? fault.mangle(reply) : reply;
      if (res.destroyed) return;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(out));
      log.ms = performance.now() - received;
    } catch (e) {
      if (!res.headersSent) res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ object: 'error', message: (e as Error).message, type: 'BadRequestError', code: 400 }));
    }
  };
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((req, res) => void handle(req, res));
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await listen();
  state.url = `http://127.0.0.1:${port}`;
  state.stop = stop;
  state.start = listen;
  state.close = stop;
  return state;
}

/** Writes server-sent events as an OpenAI-compatible engine does: `data: {json}` per chunk, then `data: [DONE]`. */
export function sseWriter(res: ServerResponse): { send(data: unknown): void; end(): void } {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  return {
    send: (data) => void res.write(`data: ${JSON.stringify(data)}\n\n`),
    end: () => res.end('data: [DONE]\n\n'),
  };
}
