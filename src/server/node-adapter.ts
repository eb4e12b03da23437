import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { toJevError } from '../contract/errors.ts';
import type { HttpRequest } from '../http/http-request.ts';
import { JsonReply } from '../http/json-reply.ts';

/** What src/http's `createHttpHandler(...).respond` is: a request in, a Response or an unrendered JSON answer out. */
export type NodeFetchHandler = (request: HttpRequest) => Promise<Response | JsonReply>;

/**
 * node:http in front of src/http's handler: the page's HTTP surface served by Node unchanged. A
 * body that declares a length up to 1 MiB (every decision's) is read whole first and handed over
 * as it is, in a light request (no undici Request, no body stream); any other becomes a WHATWG
 * Request whose body streams in (the handler bounds it, 413). A JSON answer is written as one
 * buffer with its length (no Response, no body stream: docs/server.md, "The server's
 * overhead"); a Response (a chat stream) streams out with backpressure. A client that goes away
 * (the socket closes before the response ends) aborts the request's signal, which ends the work
 * behind it (a decision's backend request, a relayed stream), and cancels the body.
 */
export function nodeHandler(handle: NodeFetchHandler, origin: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const controller = new AbortController();
    let finished = false;
    res.on('close', () => {
      if (!finished) controller.abort(new DOMException('The client closed the connection.', 'AbortError'));
    });
    void (async () => {
      try {
        const answer = await handle(toRequest(req, origin, controller.signal, await smallBody(req)));
        if (answer instanceof JsonReply) writeJson(answer, res);
        else await writeResponse(answer, res, controller.signal);
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

/** Bodies up to this size that declare their length are read whole before the handler runs. */
const SMALL_BODY_BYTES = 1 << 20;

/** The body of a request that declares a length of at most SMALL_BODY_BYTES, read whole; null for any other (streamed, bounded by the handler). */
async function smallBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (!(declared >= 0 && declared <= SMALL_BODY_BYTES) || req.method === 'GET' || req.method === 'HEAD') return null;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal, body: Buffer | null): HttpRequest {
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', origin).href;
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // A body read whole, or none: the light request. A streamed body: a WHATWG Request over the socket.
  if (body || !hasBody) return new NodeRequest(url, method, new NodeHeaders(req.headers), signal, body);
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.push([name, v]);
  }
  return new Request(url, { method, headers, signal, body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } as RequestInit);
}

/** A request's headers as `Headers.get` reads them, over node:http's (names already lower case; repeated values joined by `, `). */
class NodeHeaders {
  constructor(readonly raw: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/** A request whose body, if any, was read whole (src/http reads `wholeBody`; `body` makes a stream of it for any other reader). */
class NodeRequest implements HttpRequest {
  constructor(
    readonly url: string,
    readonly method: string,
    readonly headers: NodeHeaders,
    readonly signal: AbortSignal,
    readonly wholeBody: Uint8Array | null,
  ) {}

  get body(): ReadableStream<Uint8Array> | null {
    return this.wholeBody ? (new Response(this.wholeBody as unknown as BodyInit).body as ReadableStream<Uint8Array>) : null;
  }
}

/** A JSON answer as one write, with its length (what `Response.json` would hold: the body's JSON, `application/json`). */
export function writeJson(reply: JsonReply, res: ServerResponse): void {
  const text = JSON.stringify(reply.body);
  if (text === undefined) throw new TypeError('Value is not JSON serializable');
  const headers: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(reply.headers)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(text);
  res.writeHead(reply.status, headers);
  res.end(text);
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
