import { validatorOf, type PartialDownloads } from './partial-downloads.ts';

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** A file's answer from the network: whole (200), or the rest after `prefix`, the part kept from before. */
export interface NetworkAnswer {
  /** Status 200 and the whole file's content-length, even where the body is only the rest. */
  response: Response;
  /** The bytes the body continues (null: the body is the whole file). */
  prefix: Uint8Array | null;
}

/**
 * GETs `url`, resuming an interrupted download where part of it was kept (partial-downloads.ts):
 * the host is asked for the rest with `Range: bytes=<kept>-`, and its 206 is joined on when it is
 * the rest of the same file (the same validator, and a Content-Range, or a length, that adds up
 * to the whole). A host that ignores `Range` (answers 200) restarts the file cleanly from that
 * answer; a 206 of another file is dropped and the file fetched whole. Either way the kept part
 * is then forgotten. The whole file's SHA-256 is checked by the integrity cache, as any download's.
 * (Only `Range`, a CORS-safelisted header: no `If-Range`, which would need a preflight.)
 */
export async function resumeFetch(network: Fetch, url: string, init: RequestInit | undefined, partials: PartialDownloads | null, onResume?: (bytes: number) => void): Promise<NetworkAnswer> {
  const kept = await partials?.get(url);
  if (!kept) return { response: await network(url, init), prefix: null };
  const from = kept.bytes.byteLength;
  const headers = new Headers(init?.headers);
  headers.set('range', `bytes=${from}-`);
  const response = await network(url, { ...init, headers });
  if (response.status === 206 && restOf(response, from, kept.total, kept.validator)) {
    onResume?.(from);
    const whole = new Headers(response.headers);
    whole.set('content-length', String(kept.total));
    whole.delete('content-range');
    return { response: new Response(response.body, { status: 200, statusText: 'OK', headers: whole }), prefix: new Uint8Array(kept.bytes) };
  }
  if (response.status !== 200 && response.status !== 206) return { response, prefix: null };
  await partials!.delete(url);
  if (response.status === 200) return { response, prefix: null };
  await response.body?.cancel();
  return { response: await network(url, init), prefix: null };
}

/** Whether a 206 is the rest of the kept file: from `from` to its end, and the same file. */
function restOf(response: Response, from: number, total: number, validator: string): boolean {
  if (validatorOf(response.headers) !== validator) return false;
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
  if (range) return Number(range[1]) === from && Number(range[2]) === total - 1 && Number(range[3]) === total;
  // Content-Range not exposed to this origin (CORS): the length must make up the rest.
  return Number(response.headers.get('content-length')) === total - from;
}
