import { toJevError } from '../contract/index.ts';

/** Any failure as the HTTP error response of CONTRACT §3: `{"error":{message,type,param,code}}`. */
export function errorResponse(e: unknown, headers: HeadersInit = {}): Response {
  const error = toJevError(e);
  return Response.json(error.toBody(), { status: error.status, headers });
}
