import { errorMessages, JevError } from '../contract/index.ts';
import type { BackendKind } from './cli-args.ts';
import { nodeTarget, postNode, type NodeTarget, type NodeTimeout } from './node-post.ts';

/** Statuses by which an engine says it is overloaded or not (yet) up: told to the client as 503 with Retry-After. */
const UNAVAILABLE_STATUSES = new Set([429, 502, 503, 504]);
/** A request body already written as JSON (backend.ts `idsBody`): sent as it is. */
export class JsonText {
  constructor(readonly text: string | Uint8Array) {}
}

const serialize = (body: unknown): string | Uint8Array => (body instanceof JsonText ? body.text : JSON.stringify(body));
const serializeText = (body: unknown): string => {
  const data = serialize(body);
  return typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
};

/** Seconds a client is told to wait when the engine is down and says nothing itself. */
export const DEFAULT_RETRY_AFTER_S = 2;

export interface BackendHttpOptions {
  kind: BackendKind;
  url: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/**
 * HTTP to a serving engine, with the server's fault rules: an engine that cannot be reached, or
 * answers 429/502/503/504, is `backend_unavailable` (503, Retry-After: its own or 2 s); one that
 * does not answer within `timeoutMs` is `backend_timeout` (504); any other non-2xx is
 * `backend_bad_reply` (502) quoting its message, except where `relayStatuses` lets a 4xx through
 * (a chat request the engine itself refuses is the caller's: 400/422 with the engine's words). The
 * client's signal aborts the request. No request waits longer than the timeout for headers.
 */
export class BackendHttp {
  readonly kind: BackendKind;
  readonly url: string;
  readonly timeoutMs: number;
  readonly #fetch: typeof fetch;
  /** JSON requests go over node:http (node-post.ts), unless a fetch was given (tests that fake the engine's transport). */
  readonly #nodeJson: boolean;
  /** node:http's request options per path (worked out once). */
  readonly #targets = new Map<string, NodeTarget>();
  requests = 0;

  constructor(options: BackendHttpOptions) {
    this.kind = options.kind;
    this.url = options.url.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#nodeJson = options.fetch === undefined;
  }

  /** POSTs JSON and resolves with the 2xx response (its body unread); `timeout` ends with the headers unless `keep`. */
  async post(path: string, body: unknown, signal: AbortSignal | undefined, options: { relayStatuses?: boolean } = {}): Promise<{ response: Response; timeout: Timeout }> {
    const timeout = new Timeout(this.timeoutMs);
    const signals = [timeout.signal, ...(signal ? [signal] : [])];
    this.requests += 1;
    let response: Response;
    try {
      response = await this.#fetch(`${this.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: serializeText(body),
        signal: AbortSignal.any(signals),
      });
    } catch (e) {
      timeout.clear();
      throw this.failure(e, signal, timeout);
    }
    if (response.ok) return { response, timeout };
    timeout.clear();
    throw await this.refusal(path, response, options.relayStatuses ?? false);
  }

  /** POSTs JSON and reads the JSON reply, all within the timeout. */
  async postJson(path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    if (this.#nodeJson) return this.#postJsonNode(path, body, signal);
    const { response, timeout } = await this.post(path, body, signal);
    try {
      const text = await response.text();
      try {
        return JSON.parse(text);
      } catch {
        throw this.badReply(path, `the body is not JSON (${text.length} bytes: ${JSON.stringify(text.slice(0, 120))})`);
      }
    } catch (e) {
      throw this.failure(e, signal, timeout);
    } finally {
      timeout.clear();
    }
  }

  /** postJson over node:http: the same timeout, faults and messages as through fetch. */
  async #postJsonNode(path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    const timeout: NodeTimeout = { ms: this.timeoutMs, fired: false };
    this.requests += 1;
    let target = this.#targets.get(path);
    if (!target) this.#targets.set(path, (target = nodeTarget(new URL(`${this.url}${path}`))));
    let reply;
    try {
      reply = await postNode(target, serialize(body), signal, timeout);
    } catch (e) {
      throw this.failure(e, signal, timeout);
    }
    if (reply.status < 200 || reply.status > 299) {
      const empty = reply.status === 204 || reply.status === 205 || reply.status === 304 || reply.status < 200;
      const headers = new Headers();
      for (const [name, value] of Object.entries(reply.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      throw await this.refusal(path, new Response(empty ? null : reply.text, { status: Math.max(200, reply.status), statusText: reply.statusText, headers }), false);
    }
    try {
      return JSON.parse(reply.text);
    } catch {
      throw this.badReply(path, `the body is not JSON (${reply.text.length} bytes: ${JSON.stringify(reply.text.slice(0, 120))})`);
    }
  }

  badReply(path: string, what: string): JevError {
    return new JevError('backend_bad_reply', errorMessages.backendBadReply(this.kind, path, what), { param: null, details: { backend: this.kind, path } });
  }

  /** A thrown fetch or read failure as the client's error: its own abort, the timeout, or the engine unreachable. */
  failure(e: unknown, signal: AbortSignal | undefined, timeout: { readonly fired: boolean }): unknown {
    if (JevError.is(e)) return e;
    if (signal?.aborted) return signal.reason ?? e;
    if (timeout.fired) return new JevError('backend_timeout', errorMessages.backendTimeout(this.kind, this.url, this.timeoutMs), { param: null, details: { backend: this.kind, timeout_ms: this.timeoutMs } });
    return this.unavailable(describeFetchError(e), DEFAULT_RETRY_AFTER_S);
  }

  unavailable(reason: string, retryAfterS: number): JevError {
    return new JevError('backend_unavailable', errorMessages.backendUnavailable(this.kind, this.url, reason, retryAfterS), {
      param: null,
      details: { backend: this.kind, retry_after_s: retryAfterS },
    });
  }

  async refusal(path: string, response: Response, relay: boolean): Promise<JevError> {
    const text = await response.text().catch(() => '');
    const message = upstreamMessage(text) ?? `${text.slice(0, 200) || response.statusText || 'no body'}`;
    if (UNAVAILABLE_STATUSES.has(response.status)) {
      const stated = Number(response.headers.get('retry-after'));
      const retry = Number.isFinite(stated) && stated > 0 ? Math.ceil(stated) : DEFAULT_RETRY_AFTER_S;
      return this.unavailable(`status ${response.status}: ${message}`, retry);
    }
    if (relay && (response.status === 400 || response.status === 422)) {
      return new JevError(response.status === 400 ? 'invalid_request' : 'unprocessable', errorMessages.backendRefused(this.kind, path, response.status, message), {
        param: null,
        details: { backend: this.kind, status: response.status },
      });
    }
    return new JevError('backend_bad_reply', errorMessages.backendRefused(this.kind, path, response.status, message), {
      param: null,
      details: { backend: this.kind, path, status: response.status },
    });
  }
}

/** A timer whose signal aborts a backend request; `fired` tells a timeout from other aborts. */
export class Timeout {
  readonly #controller = new AbortController();
  #timer: ReturnType<typeof setTimeout> | null;
  fired = false;

  constructor(readonly ms: number) {
    this.#timer = setTimeout(() => {
      this.fired = true;
      this.#controller.abort(new DOMException(`No answer within ${ms} ms.`, 'TimeoutError'));
    }, ms);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Starts the wait again (a stream's next chunk). */
  restart(): void {
    if (this.#timer === null || this.fired) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.fired = true;
      this.#controller.abort(new DOMException(`No answer within ${this.ms} ms.`, 'TimeoutError'));
    }, this.ms);
  }

  clear(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}

/** The message of an OpenAI-style (`{error:{message}}`) or FastAPI-style (`{message}`, `{detail}`) error body. */
function upstreamMessage(text: string): string | null {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const error = body['error'];
    if (error && typeof error === 'object' && typeof (error as Record<string, unknown>)['message'] === 'string') return (error as Record<string, string>)['message']!;
    if (typeof error === 'string') return error;
    if (typeof body['message'] === 'string') return body['message'];
    if (typeof body['detail'] === 'string') return body['detail'];
    return null;
  } catch {
    return null;
  }
}

function describeFetchError(e: unknown): string {
  const own = (e as { code?: unknown } | null)?.code;
  if (typeof own === 'string') return own; // node:http's socket errors (node-post.ts)
  const cause = (e as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (cause?.code) return cause.code;
  return cause?.message ?? (e as Error)?.message ?? String(e);
}
