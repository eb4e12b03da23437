import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { toJevError } from '../contract/errors.ts';

/** A WHATWG handler: what src/http's `createHttpHandler(...).handle` is. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * node:http in front of a WHATWG Request → Response handler: the page's HTTP surface
 * (src/http/http-handler.ts) served by Node unchanged. A body that declares a length up to 1 MiB
 * is read whole first (cheaper for undici's Request: docs/scale-out.md, "Overhead"); any other
 * streams in (the handler bounds it, 413); the response body streams out with backpressure. A client that goes away
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
        const response = await handle(toRequest(req, origin, controller.signal, await smallBody(req)));
        await writeResponse(response, res, controller.signal);
      } catch (e) {
        // The handler answers every failure itself; this is a fault of the socket or the adapter.
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(toJevError(e).toBody()));
        } else {
          res.destroy();
        }
      } finally {
        finished = true;
      }
    })();
  };
}

/** Bodies up to this size that declare their length are read whole before the handler runs: a Buffer body costs undici's Request less than a stream. */
const SMALL_BODY_BYTES = 1 << 20;

/** The body of a request that declares a length of at most SMALL_BODY_BYTES, read whole; null for any other (streamed, bounded by the handler). */
async function smallBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (!(declared >= 0 && declared <= SMALL_BODY_BYTES) || req.method === 'GET' || req.method === 'HEAD') return null;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal, body: Buffer | null): Request {
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.push([name, v]);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', origin), {
    method,
    headers,
    signal,
    ...(hasBody ? (body ? { body } : { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' }) : {}),
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
