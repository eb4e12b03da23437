import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** A reply read whole: its status, headers and body text. */
export interface NodeReply {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

/**
 * One JSON POST over node:http(s), its reply read whole; what BackendHttp.postJson sends a
 * decision's (and the tokenizer probe's) requests with. undici's fetch cost ~2 ms of CPU per
 * request here (profiled: docs/scale-out.md, "Overhead"), the largest part of the server's own
 * time per decision; node:http with a keep-alive agent costs a fraction of it. Streams (chat) keep
 * fetch. Rejects with the socket's error (`code` ECONNREFUSED, ECONNRESET, …) or with `signal`'s
 * reason when it aborts, and destroys the request then.
 */
export function postNode(url: URL, body: string, signal: AbortSignal): Promise<NodeReply> {
  return new Promise<NodeReply>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const https = url.protocol === 'https:';
    const req = (https ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      agent: https ? HTTPS_AGENT : HTTP_AGENT,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) },
    });
    const abort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    signal.addEventListener('abort', abort, { once: true });
    const fail = (e: unknown) => {
      signal.removeEventListener('abort', abort);
      reject(signal.aborted ? signal.reason : e);
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('aborted', () => fail(new Error('the engine closed the connection mid-reply')));
      res.on('end', () => {
        signal.removeEventListener('abort', abort);
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
        }
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(body);
  });
}

/** Connections to the engine kept open between requests (a decision is one request; a new TCP connection each time would cost more than the work). */
const HTTP_AGENT = new HttpAgent({ keepAlive: true });
const HTTPS_AGENT = new HttpsAgent({ keepAlive: true });
