import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** A WHATWG handler: what src/http's `createHttpHandler(...).handle` is. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * node:http in front of a WHATWG Request → Response handler: the page's HTTP surface
 * (src/http/http-handler.ts) served by Node unchanged. The request body streams in (the handler
 * bounds it, 413); the response body streams out with backpressure. A client that goes away
 * (the socket closes before the response ends) aborts the request's signal, which ends the
 * work behind it (a decision's backend request, a relayed stream), and cancels the body.
 */
export function nodeHandler(handle: FetchHandler, origin: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const controller = new AbortController();
    let finished = false;
    res.on('close', () => {
      if (!finished) controller.abort(new DOMException('The client closed the connection.', 'AbortError'));
    });
    void (async () => {
      try {
        const response = await handle(toRequest(req, origin, controller.signal));
        await writeResponse(response, res, controller.signal);
      } catch (e) {
        // The handler answers every failure itself; this is a fault of the socket or the adapter.
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: { message: (e as Error).message ?? String(e), type: 'server_error', param: null, code: 'engine_error' } }));
        } else {
          res.destroy();
        }
      } finally {
        finished = true;
      }
    })();
  };
}

function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', origin), {
    method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit);
}

async function writeResponse(response: Response, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => {
        const go = () => {
          res.off('drain', go);
          res.off('close', go);
          resolve();
        };
        res.on('drain', go);
        res.on('close', go);
      });
      if (signal.aborted) return;
    }
    res.end();
  } catch (e) {
    if (!signal.aborted) res.destroy(e as Error);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}
