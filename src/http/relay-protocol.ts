/**
 * The wire between the service worker and the page that hosts the engine. The service worker
 * cannot run the engine itself (it may be stopped at any time, and cannot start a Worker), so it
 * relays each request to a page over a MessagePort, and the response back, streamed.
 */

/**
 * Service worker → page, on `navigator.serviceWorker`, with the reply port transferred. The body
 * is not in it: a page acknowledges this small message (so how long the acknowledgement may take
 * does not depend on the body's size: a 32 MiB body cloned to a busy page took more than the
 * acknowledgement's 3 s), and the body follows on the port (`RelayBody`) once it has.
 */
export interface RelayRequest {
  type: 'jev-relay-request';
  method: string;
  url: string;
  headers: [string, string][];
  /** Whether a `RelayBody` follows on the port (null body otherwise). */
  hasBody: boolean;
}

/** Service worker → page, on the port, after the page's `ack`: the request's body. */
export interface RelayBody {
  type: 'body';
  bytes: ArrayBuffer;
}

/** Page → service worker, on the port. */
export type RelayReply =
  | { type: 'ack' }
  | { type: 'head'; status: number; headers: [string, string][] }
  | { type: 'chunk'; bytes: ArrayBuffer }
  | { type: 'end' }
  | { type: 'error'; message: string };

/** Service worker → page, on the port: the reader went away. */
export interface RelayCancel {
  type: 'cancel';
}

export const RELAY_REQUEST = 'jev-relay-request';

export function isRelayRequest(x: unknown): x is RelayRequest {
  return typeof x === 'object' && x !== null && (x as { type?: unknown }).type === RELAY_REQUEST;
}
