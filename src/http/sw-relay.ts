/// <reference lib="webworker" />
import { JevError } from '../contract/index.ts';
import { endpointMatcher } from './endpoint-matcher.ts';
import { errorResponse } from './error-response.ts';
import { RELAY_REQUEST, type RelayBody, type RelayCancel, type RelayReply, type RelayRequest } from './relay-protocol.ts';

/** How long a page has to acknowledge a relayed request before another is tried. */
const ACK_MS = 3000;

/**
 * Installs the service worker's side of the HTTP surface: requests to the endpoints (on this
 * origin, under the base path given as `?base=` in the worker's URL) are answered by the page
 * that made them, or else by any window of this origin that hosts the engine. Every other
 * request is left alone (it goes to the network or to the precache).
 */
export function installServiceWorkerRelay(sw: ServiceWorkerGlobalScope): void {
  const basePath = new URL(sw.location.href).searchParams.get('base') ?? '';
  const isEndpoint = endpointMatcher(basePath);
  sw.addEventListener('fetch', (event) => {
    const url = new URL(event.request.url);
    if (url.origin !== sw.location.origin || !isEndpoint(url.pathname)) return;
    event.respondWith(relay(sw, event));
  });
}

async function relay(sw: ServiceWorkerGlobalScope, event: FetchEvent): Promise<Response> {
  const request = event.request;
  const body = request.method === 'GET' || request.method === 'HEAD' ? null : await request.arrayBuffer();
  const message: RelayRequest = {
    type: RELAY_REQUEST,
    method: request.method,
    url: request.url,
    headers: [...request.headers],
    hasBody: body !== null,
  };
  const own = event.clientId ? await sw.clients.get(event.clientId) : undefined;
  const windows = await sw.clients.matchAll({ type: 'window' });
  const candidates = [own, ...windows.filter((w) => w.id !== own?.id)].filter((c): c is Client => !!c);
  for (const client of candidates) {
    const response = await relayTo(sw, client, message, body, request.signal);
    if (response) return response;
  }
  return errorResponse(new JevError('engine_unavailable', 'No open page of this origin hosts the engine; open the app and retry.', { param: null }));
}

/** How often a relay checks that its page is still open, where the port's `close` event is missing. */
const WATCH_MS = 1000;

/**
 * The response from one page, or null when it does not acknowledge (no engine there) or closes
 * before it answers (the next page is then tried). A page that closes while its response streams
 * ends that response: an event-stream with a last `engine_unavailable` error event, any other
 * body with an error.
 */
function relayTo(sw: ServiceWorkerGlobalScope, client: Client, message: RelayRequest, requestBody: ArrayBuffer | null, signal: AbortSignal): Promise<Response | null> {
  const channel = new MessageChannel();
  const port = channel.port1;
  return new Promise<Response | null>((resolve) => {
    let finished = false;
    let stream = false;
    const finish = () => {
      finished = true;
      clearTimeout(timer);
      clearInterval(watch);
      port.close();
    };
    const timer = setTimeout(() => {
      finish();
      resolve(null);
    }, ACK_MS);
    let body: ReadableStreamDefaultController<Uint8Array> | null = null;
    const cancel = () => {
      if (finished) return;
      const msg: RelayCancel = { type: 'cancel' };
      port.postMessage(msg);
      finish();
    };
    // The page went away (closed, crashed, navigated) before it finished answering.
    const gone = () => {
      if (finished) return;
      finish();
      if (!body) return resolve(null);
      const error = new JevError('engine_unavailable', 'The page that hosted the engine closed while answering; retry the request.', { param: null });
      if (stream) {
        body.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(error.toBody())}\n\n`));
        body.close();
      } else {
        body.error(error);
      }
    };
    port.addEventListener('close', gone);
    const watch = setInterval(() => void sw.clients.get(client.id).then((c) => c || gone(), () => undefined), WATCH_MS);
    signal.addEventListener('abort', cancel, { once: true });
    port.onmessage = (e: MessageEvent<RelayReply>) => {
      const reply = e.data;
      switch (reply.type) {
        case 'ack': {
          clearTimeout(timer);
          // Cloned, not transferred: should this page close before answering, the next one needs it too.
          if (requestBody) port.postMessage({ type: 'body', bytes: requestBody } satisfies RelayBody);
          break;
        }
        case 'head':
          stream = reply.headers.some(([k, v]) => k.toLowerCase() === 'content-type' && v.startsWith('text/event-stream'));
          resolve(
            new Response(
              new ReadableStream<Uint8Array>({
                start: (controller) => void (body = controller),
                cancel,
              }),
              { status: reply.status, headers: reply.headers },
            ),
          );
          break;
        case 'chunk':
          body?.enqueue(new Uint8Array(reply.bytes));
          break;
        case 'end':
          body?.close();
          finish();
          break;
        case 'error':
          body?.error(new Error(reply.message));
          finish();
          break;
        default: {
          const never: never = reply;
          void never;
        }
      }
    };
    client.postMessage(message, [channel.port2]);
  });
}
