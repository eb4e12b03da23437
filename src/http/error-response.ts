import { toJevError } from '../contract/index.ts';

/**
 * Any failure as the HTTP error response of CONTRACT §3: `{"error":{message,type,param,code}}`.
 * A refusal that says when to come back (`details.retry_after_s`, a full queue: 429) carries it
 * as `Retry-After`, in seconds, which the `openai` client honours when it retries.
 */
export function errorResponse(e: unknown, headers: HeadersInit = {}): Response {
  const error = toJevError(e);
  const all = new Headers(headers);
  const retry = error.details?.['retry_after_s'];
  if (typeof retry === 'number' && Number.isFinite(retry) && retry >= 0) all.set('Retry-After', String(Math.ceil(retry)));
  return Response.json(error.toBody(), { status: error.status, headers: all });
}
