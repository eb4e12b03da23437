import type { JevError } from '../../contract/index.ts';
import type { LoadOptions } from '../../protocol/engine-api.ts';
import { externalDataFiles } from './external-data.ts';
import { isUnanswered, loadFailure, originOf, statusFailure, unansweredFailure, type FileContext, type Probe } from './load-failure.ts';
import type { ModelSource } from './load-model.ts';

/** A ModelSource that can also say, before anything loads, whether the model can be had at all. */
export interface CheckedModelSource extends ModelSource {
  /**
   * Reads the model's `config.json` (from the model cache first, so that it works offline), and
   * fails with the true cause where it cannot: the host cannot be reached, refuses CORS, or has
   * no such model. Resolves with the parsed config.
   */
  check(): Promise<unknown>;
  /** The files among `onnx/<file>` and its external data (`_data`) that the model lacks. */
  missing(file: string): Promise<string[]>;
  /**
   * The bytes of `onnx/<file>` and its external data, as the host states them (`Content-Length`,
   * or the hub's `X-Linked-Size`) or the cache holds them; null where a file is missing or its size unstated.
   */
  bytes(file: string): Promise<number | null>;
  /** The model's folder on the host, `{host}/{model}/resolve/main/`. */
  readonly base: string;
  /**
   * Why the first request that got no answer while the model's config came from the cache
   * (offline) got none: such a file counts as not offered, so that a cached format still loads;
   * where none does, this is the cause to report. Null where every request was answered.
   */
  unanswered(): Promise<JevError | null>;
}

export interface HttpSourceOptions {
  /** The Cache API cache transformers.js stores the model's files in (keys: their URLs), or null. */
  cacheName: string | null;
  fetch?: typeof fetch;
  probe?: Probe;
}

/**
 * Asks the host whether the model offers a file; a file already in the model cache counts
 * (offline). A graph counts as offered only with every external data file `config.json`
 * declares for it. A host that gives no answer is a failure naming why, never "not offered".
 */
export function httpSource(options: LoadOptions, { cacheName, fetch: fetchFn = (...a) => fetch(...a), probe }: HttpSourceOptions): CheckedModelSource {
  const base = `${options.host.replace(/\/+$/, '')}/${options.model}/resolve/main/`;
  const ctx: FileContext = { model: options.model, base };
  let config: Promise<unknown> | null = null;
  let configCached = false;
  let unanswered: { url: string; error: unknown } | null = null;
  /** Each file's stated size, from the answers `offers` already had (memory-check.ts reads them). */
  const sizes = new Map<string, number | null>();

  const cached = async (url: string): Promise<Response | undefined> => {
    if (!cacheName || typeof caches === 'undefined') return undefined;
    return caches.open(cacheName).then((c) => c.match(url)).catch(() => undefined);
  };
  const request = async (url: string, init?: RequestInit): Promise<Response> => {
    try {
      return await fetchFn(url, init);
    } catch (e) {
      if (isUnanswered(e)) throw await unansweredFailure(url, e, ctx, probe);
      throw e;
    }
  };
  /** Whether the host offers one file: 200 yes, 404 (or 401/403) no, anything else a failure. */
  const offers = async (file: string): Promise<boolean> => {
    const url = base + file;
    const stored = await cached(url);
    if (stored) {
      sizes.set(file, statedSize(stored));
      return true;
    }
    let res: Response;
    try {
      res = configCached ? await fetchFn(url, { method: 'HEAD' }) : await request(url, { method: 'HEAD' });
    } catch (e) {
      // Offline with the model cached: what is not stored is not to be had now (asked why only if it matters).
      if (!configCached || !isUnanswered(e)) throw e;
      unanswered ??= { url, error: e };
      return false;
    }
    if (res.ok) {
      sizes.set(file, statedSize(res));
      return true;
    }
    if (res.status === 404 || res.status === 401 || res.status === 403) return false;
    throw statusFailure(url, res.status, ctx);
  };
  const check = () => {
    config ??= (async () => {
      const url = `${base}config.json`;
      // A stored copy whose body the browser evicted under its entry cannot be read: then the host is asked.
      const stored = await cached(url);
      const storedText = stored ? await stored.text().catch(() => null) : null;
      configCached = storedText !== null;
      const res = configCached ? stored! : await request(url);
      if (!res.ok) throw statusFailure(url, res.status, ctx);
      const text = storedText ?? (await res.text());
      try {
        return JSON.parse(text) as unknown;
      } catch {
        // e.g. ?host= pointed at a web app that answers every path with its page.
        const type = res.headers.get('content-type')?.split(';')[0] ?? 'no content type';
        throw loadFailure(
          `${url} answered with something that is not JSON (${type}): ${originOf(url)} does not look like a model host in the Hugging Face layout ({host}/{model}/resolve/main/{file}). Check ?host=.`,
          { reason: 'host_error', host: originOf(url), url, file: 'config.json', status: res.status, model: options.model },
          'host',
        );
      }
    })();
    return config;
  };
  const missing = async (file: string): Promise<string[]> => {
    const files = [`onnx/${file}`, ...externalDataFiles(await check(), `onnx/${file}`)];
    const present = await Promise.all(files.map(offers));
    return files.filter((_, i) => !present[i]);
  };
  return {
    base,
    async unanswered() {
      return unanswered && unansweredFailure(unanswered.url, unanswered.error, ctx, probe);
    },
    check,
    missing,
    async has(file) {
      return (await missing(file)).length === 0;
    },
    async bytes(file) {
      if ((await missing(file)).length > 0) return null;
      const each = [`onnx/${file}`, ...externalDataFiles(await check(), `onnx/${file}`)].map((f) => sizes.get(f) ?? null);
      return each.every((n): n is number => n !== null) ? each.reduce((sum, n) => sum + n, 0) : null;
    },
  };
}

function statedSize(res: Response): number | null {
  const n = Number(res.headers.get('x-linked-size') ?? res.headers.get('content-length') ?? NaN);
  return Number.isFinite(n) && n > 0 ? n : null;
}

