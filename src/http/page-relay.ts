import { isRelayRequest, type RelayBody, type RelayCancel, type RelayReply } from './relay-protocol.ts';

/**
 * The page's side of the relay: answers requests the service worker forwards, with the given
 * fetch-compatible handler (the client's `fetch`), streaming the body back. A cancel from the
 * service worker (the reader went away) aborts the request, which stops generation.
 */
export function installPageRelay(container: ServiceWorkerContainer, handle: typeof fetch): () => void {
  const onMessage = (event: MessageEvent) => {
    const port = event.ports[0];
    if (!isRelayRequest(event.data) || !port) return;
    const send = (reply: RelayReply, transfer: Transferable[] = []) => port.postMessage(reply, transfer);
    send({ type: 'ack' });
    const controller = new AbortController();
    let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
    const { method, url, headers, hasBody } = event.data;
    // The body follows the acknowledgement on the port (relay-protocol.ts).
    let bodyArrived: (bytes: ArrayBuffer) => void = () => {};
    const body = hasBody ? new Promise<ArrayBuffer>((resolve) => (bodyArrived = resolve)) : null;
    port.onmessage = (e: MessageEvent<RelayCancel | RelayBody>) => {
      if (e.data.type === 'body') bodyArrived(e.data.bytes);
      else if (e.data.type === 'cancel') {
        controller.abort(new DOMException('The response was cancelled.', 'AbortError'));
        void reader?.cancel().catch(() => undefined);
      }
    };
    void (async () => {
      try {
        const bytes = body ? await Promise.race([body, aborted(controller.signal)]) : null;
        const response = await handle(url, { method, headers, body: bytes, signal: controller.signal });
        send({ type: 'head', status: response.status, headers: [...response.headers] });
        if (response.body) {
          reader = response.body.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            const bytes = value.slice().buffer;
            send({ type: 'chunk', bytes }, [bytes]);
          }
        }
        send({ type: 'end' });
      } catch (e) {
        send({ type: 'error', message: (e as Error).message ?? String(e) });
      }
    })();
  };
  container.addEventListener('message', onMessage);
  container.startMessages();
  return () => container.removeEventListener('message', onMessage);
}

/** Rejects when `signal` aborts: a request cancelled before its body arrived. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}
