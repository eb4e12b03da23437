/**
 * A JSON answer not yet made a Response. The page's fetch (fetch-function.ts) and the service
 * worker get a Response (`toResponse`, as `Response.json` makes it); the Node server writes it
 * to its socket itself (src/server/node-adapter.ts), without a Response and its body stream.
 */
export class JsonReply {
  constructor(
    readonly body: unknown,
    readonly status = 200,
    /** Extra headers (Allow, Retry-After); the content type is always application/json. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  toResponse(): Response {
    return Response.json(this.body, { status: this.status, headers: this.headers });
  }
}

/** A route's or the handler's answer as a Response. */
export const toResponse = (answer: Response | JsonReply): Response => (answer instanceof JsonReply ? answer.toResponse() : answer);
