import { toJevError } from '../contract/index.ts';
import { JsonReply } from './json-reply.ts';

/**
 * Any failure as the HTTP error answer of CONTRACT §3: `{"error":{message,type,param,code}}`.
 * A refusal that says when to come back (`details.retry_after_s`, a full queue: 429) carries it
 * as `Retry-After`, in seconds, which the `openai` client honours when it retries.
 */
export function errorReply(e: unknown, headers: Readonly<Record<string, string>> = {}): JsonReply {
  const error = toJevError(e);
  const retry = error.details?.['retry_after_s'];
  const all = typeof retry === 'number' && Number.isFinite(retry) && retry >= 0 ? { ...headers, 'Retry-After': String(Math.ceil(retry)) } : headers;
  return new JsonReply(error.toBody(), error.status, all);
}

/** `errorReply` as a Response. */
export function errorResponse(e: unknown, headers: Readonly<Record<string, string>> = {}): Response {
  return errorReply(e, headers).toResponse();
}
