/**
 * The one error type of the service. A stable `code` maps to one HTTP status through
 * `errorCodes`; the wire body is OpenAI's `{"error":{"message","type","param","code"}}`.
 * Errors cross worker and service-worker boundaries as plain values (`toJSON` / `fromJSON`),
 * never as bare strings.
 */
import './zod-config.ts';
import { z } from 'zod';
import { errorMessages } from './messages.ts';

/** Every error code the service answers with, and its HTTP status. */
export const errorCodes = {
  invalid_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  /** The Node server (src/server/): a Host or Origin it does not serve (a DNS-rebinding page, another site). */
  forbidden: 403,
  model_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  context_length_exceeded: 422,
  unprocessable: 422,
  /** A response format or tool's grammar outgrew the compile's bound in time or memory (docs/structured-output.md). */
  schema_too_complex: 422,
  queue_full: 429,
  aborted: 499,
  engine_error: 500,
  /** A server in front of a serving engine (src/server/): the engine answered with something unreadable or incomplete. */
  backend_bad_reply: 502,
  model_load_failed: 503,
  engine_unavailable: 503,
  /** The serving engine behind the server is down or refuses requests (with Retry-After). */
  backend_unavailable: 503,
  /** The serving engine did not answer within the server's timeout. */
  backend_timeout: 504,
  /** A request this server's backend cannot serve exactly (extractions through a relay: docs/extraction.md). */
  not_implemented: 501,
} as const;

export type ErrorCode = keyof typeof errorCodes;

/**
 * The codes a caller may retry as they are, later or on another replica: the engine was busy,
 * restarting or out of reach, and the request itself was not at fault. Every other code is
 * retried in vain (the body must change) unless an error says otherwise (`retriable` option).
 */
const retriableCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['queue_full', 'engine_unavailable', 'backend_unavailable', 'backend_timeout']);

/** Whether a request refused with `code` may be sent again unchanged. */
export function isRetriableCode(code: ErrorCode): boolean {
  return retriableCodes.has(code);
}

/** OpenAI's error `type`: one for the caller's faults, one for ours. */
export type ErrorType = 'invalid_request_error' | 'server_error';

export interface ErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: ErrorCode;
  /** Whether the same request may be sent again unchanged (later, or to another replica). */
  retriable: boolean;
}

export interface ErrorBody {
  error: ErrorObject;
}

/** A JevError as a structured-clone- and JSON-safe value (what `toJSON` returns). */
export interface SerializedJevError {
  name: 'JevError';
  code: ErrorCode;
  message: string;
  param: string | null;
  status: number;
  type: string;
  retriable: boolean;
  details?: Record<string, unknown>;
}

export interface JevErrorOptions {
  param?: string | null;
  details?: Record<string, unknown>;
  cause?: unknown;
  /** Overrides the code's default (`isRetriableCode`), e.g. a load that failed on a network cut. */
  retriable?: boolean;
}

export function isErrorCode(x: unknown): x is ErrorCode {
  return typeof x === 'string' && Object.hasOwn(errorCodes, x);
}

export function statusOf(code: ErrorCode): number {
  return errorCodes[code];
}

export function errorTypeOf(status: number): ErrorType {
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/** The code a bare HTTP status stands for, for bodies whose own code is not one of ours. */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400: return 'invalid_request';
    case 401: return 'unauthorized';
    case 403: return 'forbidden';
    case 404: return 'not_found';
    case 405: return 'method_not_allowed';
    case 413: return 'payload_too_large';
    case 415: return 'unsupported_media_type';
    case 422: return 'unprocessable';
    case 429: return 'queue_full';
    case 499: return 'aborted';
    case 501: return 'not_implemented';
    case 502: return 'backend_bad_reply';
    case 503: return 'engine_unavailable';
    case 504: return 'backend_timeout';
    default: return status >= 400 && status < 500 ? 'invalid_request' : 'engine_error';
  }
}

export const errorObjectSchema = z.object({
  message: z.string(),
  type: z.string(),
  param: z.string().nullable(),
  code: z.string(),
  retriable: z.boolean().optional(),
});

export const errorBodySchema = z.object({ error: errorObjectSchema });

export class JevError extends Error {
  override readonly name = 'JevError';
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly status: number;
  readonly type: string;
  /** Whether the same request may be sent again unchanged (later, or to another replica). */
  readonly retriable: boolean;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, opts: JevErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.param = opts.param ?? null;
    this.status = statusOf(code);
    this.type = errorTypeOf(this.status);
    this.retriable = opts.retriable ?? isRetriableCode(code);
    if (opts.details !== undefined) this.details = opts.details;
  }

  /** The body's `error` object, as the `openai` client's APIError carries it. */
  get error(): ErrorObject {
    return this.toBody().error;
  }

  /** The HTTP response body. */
  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code, retriable: this.retriable } };
  }

  toJSON(): SerializedJevError {
    const out: SerializedJevError = {
      name: 'JevError',
      code: this.code,
      message: this.message,
      param: this.param,
      status: this.status,
      type: this.type,
      retriable: this.retriable,
    };
    if (this.details !== undefined) out.details = this.details;
    return out;
  }

  /**
   * Rebuilds an error from an HTTP error body. A code that is not one of ours (another
   * service's) is mapped from the status and kept in `details.upstreamCode`.
   */
  static fromBody(body: ErrorBody, status?: number): JevError {
    const parsed = errorBodySchema.safeParse(body);
    if (!parsed.success) {
      const code = status === undefined ? 'engine_error' : codeForStatus(status);
      return new JevError(code, errorMessages.unreadableErrorBody(status));
    }
    const { message, param, code, retriable } = parsed.data.error;
    const kept = retriable === undefined ? {} : { retriable };
    if (isErrorCode(code)) return new JevError(code, message, { param, ...kept });
    const mapped = status === undefined ? 'engine_error' : codeForStatus(status);
    return new JevError(mapped, message, { param, details: { upstreamCode: code }, ...kept });
  }

  /** Rebuilds an error from `toJSON()`'s value (e.g. after crossing a worker boundary). */
  static fromJSON(x: SerializedJevError): JevError {
    const opts: JevErrorOptions = { param: x.param };
    if (typeof x.retriable === 'boolean') opts.retriable = x.retriable;
    if (x.details !== undefined) opts.details = x.details;
    return new JevError(isErrorCode(x.code) ? x.code : 'engine_error', x.message, opts);
  }

  static is(x: unknown): x is JevError {
    return x instanceof JevError;
  }
}

function isSerialized(x: unknown): x is SerializedJevError {
  if (typeof x !== 'object' || x === null) return false;
  const r = x as Record<string, unknown>;
  return r['name'] === 'JevError' && isErrorCode(r['code']) && typeof r['message'] === 'string';
}

function errorName(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const name = (e as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e !== null) {
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  try {
    return String(e);
  } catch {
    return errorMessages.unknownFault();
  }
}

/**
 * Any thrown value as a JevError: a JevError (or its serialized form) passes through; an
 * `AbortError` or `TimeoutError` (what `AbortSignal.timeout` throws) becomes `aborted`;
 * anything else is `engine_error` carrying its message, with the original as `cause`.
 */
export function toJevError(e: unknown): JevError {
  if (e instanceof JevError) return e;
  if (isSerialized(e)) return JevError.fromJSON(e);
  const name = errorName(e);
  if (name === 'AbortError' || name === 'TimeoutError') {
    const text = errorText(e);
    return new JevError('aborted', text === '' ? errorMessages.aborted() : text, { cause: e });
  }
  const text = errorText(e);
  return new JevError('engine_error', text === '' ? errorMessages.unknownFault() : text, { cause: e });
}
