import { errorMessages, JevError, limits } from '../contract/index.ts';
import type { HttpRequest } from './http-request.ts';

/**
 * The request's JSON body: 415 unless it is declared JSON, 413 past the size limit (counted as
 * it streams in, whatever Content-Length claims, or as read whole before), 400 when it does not
 * parse.
 */
export async function readJsonBody(request: HttpRequest, maxBytes: number = limits.maxBodyBytes): Promise<unknown> {
  const type = request.headers.get('content-type');
  const mime = type?.split(';')[0]?.trim().toLowerCase() ?? null;
  if (mime !== 'application/json' && !(mime?.startsWith('application/') && mime.endsWith('+json'))) {
    throw new JevError('unsupported_media_type', errorMessages.unsupportedMediaType(type), { param: null });
  }
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new JevError('payload_too_large', errorMessages.payloadTooLarge(maxBytes), { param: null });
  const whole = request.wholeBody;
  if (whole && whole.byteLength > maxBytes) throw new JevError('payload_too_large', errorMessages.payloadTooLarge(maxBytes), { param: null });
  const bytes = whole ?? (await readLimited(request, maxBytes));
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new JevError('invalid_json', errorMessages.invalidJson('it is not valid UTF-8'), { param: null });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JevError('invalid_json', errorMessages.invalidJson((e as Error).message), { param: null });
  }
}

/** Strict UTF-8 (a malformed body is refused, not patched); reused: `decode` without `stream` keeps no state. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

async function readLimited(request: HttpRequest, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new JevError('payload_too_large', errorMessages.payloadTooLarge(maxBytes), { param: null });
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
