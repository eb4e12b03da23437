/**
 * The wire between the service worker and the page that hosts the engine. The service worker
 * cannot run the engine itself (it may be stopped at any time, and cannot start a Worker), so it
 * relays each request to a page over a MessagePort, and the response back, streamed.
 */

/** Service worker → page, on `navigator.serviceWorker`, with the reply port transferred. */
export interface RelayRequest {
  type: 'jev-relay-request';
  method: string;
  url: string;
  headers: [string, string][];
  body: ArrayBuffer | null;
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
