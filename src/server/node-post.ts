import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';

/** A reply read whole: its status, headers and body text. */
export interface NodeReply {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  text: string;
}

/** A request's time limit: `fired` once it ran out (set by postNode). */
export interface NodeTimeout {
  readonly ms: number;
  fired: boolean;
}

/** Where postNode sends: a URL's request options, worked out once per URL (`nodeTarget`). */
export interface NodeTarget {
  https: boolean;
  options: RequestOptions;
}

export function nodeTarget(url: URL): NodeTarget {
  const https = url.protocol === 'https:';
  return { https, options: { ...urlToHttpOptions(url), method: 'POST', agent: https ? HTTPS_AGENT : HTTP_AGENT } };
}

/**
 * One JSON POST over node:http(s), its reply read whole; what BackendHttp.postJson sends a
 * decision's (and the tokenizer probe's) requests with. undici's fetch cost ~2 ms of CPU per
 * request here (profiled: docs/server.md, "The server's overhead"), the largest part of the
 * server's own time per decision; node:http with a keep-alive agent costs a fraction of it. Streams
 * (chat) keep fetch. Rejects with the socket's error (`code` ECONNREFUSED, ECONNRESET, …), with
 * `signal`'s reason when it aborts, or with a TimeoutError (and `timeout.fired` set) when no whole
 * reply came within `timeout.ms`; destroys the request then. One timer, no AbortController.
 */
export function postNode(target: NodeTarget, body: string | Uint8Array, signal: AbortSignal | undefined, timeout: NodeTimeout): Promise<NodeReply> {
  return new Promise<NodeReply>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const req = (target.https ? httpsRequest : httpRequest)({
      ...target.options,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength },
    });
    let settled = false;
    const timer = setTimeout(() => {
      timeout.fired = true;
      req.destroy(new DOMException(`No answer within ${timeout.ms} ms.`, 'TimeoutError'));
    }, timeout.ms);
    const abort = () => req.destroy(signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason)));
    signal?.addEventListener('abort', abort, { once: true });
    const done = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    };
    const fail = (e: unknown) => {
      if (settled) return;
      done();
      reject(signal?.aborted ? signal.reason : e);
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('aborted', () => fail(new Error('the engine closed the connection mid-reply')));
      res.on('end', () => {
        if (settled) return;
        done();
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, text: (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8') });
      });
    });
    req.end(body);
  });
}

/** Connections to the engine kept open between requests (a decision is one request; a new TCP connection each time would cost more than the work). */
const HTTP_AGENT = new HttpAgent({ keepAlive: true });
const HTTPS_AGENT = new HttpsAgent({ keepAlive: true });
