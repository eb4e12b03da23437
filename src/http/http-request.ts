/**
 * What the handler and its routes read of a request. A WHATWG Request is one; the Node server
 * passes a lighter one (src/server/node-adapter.ts) whose body it read whole (`wholeBody`).
 */
export interface HttpRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: { get(name: string): string | null };
  readonly signal: AbortSignal;
  readonly body: ReadableStream<Uint8Array> | null;
  /** The whole body, read before the handler ran: read-json-body.ts takes it instead of `body`. */
  readonly wholeBody?: Uint8Array | null;
}
