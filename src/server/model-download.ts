import { link, mkdir, rm, copyFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { JevError } from '../contract/index.ts';
import { externalDataFiles } from '../engine/load/external-data.ts';
import { httpSource } from '../engine/load/http-source.ts';
import { chooseDtype, DTYPE_FILES, exporterDtype } from '../engine/load/load-model.ts';
import type { Dtype } from '../engine/model/language-model.ts';
import { modelFetch } from '../engine/load/model-fetch.ts';
import { IntegrityCache, MODEL_CACHE } from '../engine/load/storage/integrity-cache.ts';
import type { DtypeChoice, LoadEvent } from '../protocol/engine-api.ts';
import { DiskCacheStorage, installDiskCaches } from './disk-cache-storage.ts';

/** The files a model needs besides its graph: read by the tokenizer and the model's config. */
const REQUIRED = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
/** Files a model may have (a 404 is no fault): generation defaults, special tokens, a chat template kept apart. */
const OPTIONAL = ['generation_config.json', 'special_tokens_map.json', 'chat_template.jinja', 'chat_template.json'];

export interface DownloadedModel {
  /** A folder in the hub layout (`{root}/{model}/…`) whose files are links to the checked store's. */
  root: string;
  dtype: Dtype;
}

/**
 * A model's files from an HTTP(S) host in the hub layout, made a local folder the engine reads as
 * any other. The files go through the page's own fetch and store (engine/load/model-fetch.ts,
 * storage/integrity-cache.ts) over the Cache API kept on disk (disk-cache-storage.ts): a download
 * whose SHA-256 is not the one the host states (the hub's X-Linked-ETag) is refused and not
 * stored; every stored file's size and SHA-256 are checked when it is read back (here, at each
 * start); a download that breaks off is kept and resumed with `Range` next time (resume-fetch.ts);
 * with everything stored, the host need not answer. The format is chosen as the engine chooses it
 * (`chooseDtype`, the CPU's preference and what the host offers); then each file is hard-linked
 * (or copied, across file systems) from the store into `{cacheDir}/models/{host}/{model}/`.
 */
export async function downloadModel(
  model: string,
  host: string,
  dtype: DtypeChoice,
  cacheDir: string,
  onEvent: (event: LoadEvent) => void = () => {},
): Promise<DownloadedModel> {
  const storage = new DiskCacheStorage(cacheDir);
  installDiskCaches(storage);
  const cache = new IntegrityCache();
  const fetchFile = modelFetch((input, init) => fetch(input, init), cache, () => null);
  const source = httpSource({ model, host, device: 'auto', dtype }, { cacheName: MODEL_CACHE });
  const config = await source.check();
  const chosen = await chooseDtype(dtype, 'cpu', false, source, exporterDtype(config));
  const graph = `onnx/${DTYPE_FILES[chosen]}`;
  const missing = await source.missing(DTYPE_FILES[chosen]);
  if (missing.length > 0) {
    throw new JevError('model_load_failed', `${source.base} lacks ${missing.join(', ')} of the ${chosen} format.`, { param: 'dtype', details: { reason: 'file_missing', files: missing, dtype: chosen } });
  }
  const root = join(cacheDir, 'models', hostFolder(host));
  const wanted = [...REQUIRED.map((f) => [f, true] as const), ...OPTIONAL.map((f) => [f, false] as const), [graph, true] as const, ...externalDataFiles(config, graph).map((f) => [f, true] as const)];
  for (const [file, required] of wanted) {
    const url = `${source.base}${file}`;
    const stored = await fetchInto(fetchFile, cache, url, file, required, onEvent);
    if (!stored) continue;
    const path = await (await storage.open(MODEL_CACHE)).bodyPath(url);
    if (!path) throw new JevError('model_load_failed', `${url} was read but could not be stored under ${cacheDir} (${storeProblem(cache, url)}).`, { param: 'host', details: { reason: 'store_failed', url } });
    await place(path, join(root, model, file));
  }
  return { root, dtype: chosen };
}

/**
 * Reads `url` whole through the checked fetch (from the store where it holds a sound copy, else the
 * host), reporting progress; resolves whether it is now stored. A missing optional file is no fault.
 */
async function fetchInto(
  fetchFile: ReturnType<typeof modelFetch>,
  cache: IntegrityCache,
  url: string,
  file: string,
  required: boolean,
  onEvent: (event: LoadEvent) => void,
): Promise<boolean> {
  let response: Response;
  try {
    response = await fetchFile(url);
  } catch (e) {
    if (!required) return false;
    throw new JevError('model_load_failed', `${url} could not be fetched: ${(e as Error).message}`, { param: 'host', details: { reason: 'host_unreachable', url }, cause: e });
  }
  if (response.status === 404 && !required) {
    await response.body?.cancel();
    return false;
  }
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    throw new JevError('model_load_failed', `${url} answered ${response.status}.`, { param: response.status === 404 ? 'model' : 'host', details: { reason: 'host_error', url, status: response.status } });
  }
  const total = Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  let loaded = 0;
  try {
    // The views are only counted: the store (model-fetch.ts) keeps the one buffer they lie in.
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      loaded += r.value.byteLength;
      onEvent({ type: 'file', file, loaded, total: Math.max(total, loaded) });
    }
  } catch (e) {
    const refused = cache.refused.find((x) => x.key === url);
    if (refused) {
      throw new JevError('model_load_failed', `The download of ${url} is corrupt: its SHA-256 is ${refused.sha256}, the host states ${refused.stated}. Nothing of it was stored.`, {
        param: 'host',
        details: { reason: 'file_corrupt', url, file, sha256: refused.sha256, stated: refused.stated },
        cause: e,
      });
    }
    throw new JevError('model_load_failed', `The download of ${url} broke off after ${loaded} of ${total || 'unknown'} bytes: ${(e as Error).message}. What arrived is kept; the next start asks for the rest (Range).`, {
      param: 'host',
      details: { reason: 'download_interrupted', url, file, loaded, total },
      cause: e,
      retriable: true,
    });
  }
  onEvent({ type: 'file-done', file });
  return true;
}

function storeProblem(cache: IntegrityCache, url: string): string {
  const unstored = cache.unstored.find((u) => u.key === url);
  return unstored ? `${unstored.reason}${unstored.error ? `: ${unstored.error}` : ''}` : 'no entry';
}

/** The stored body at `target`: a hard link (no second copy), or a copy where links cannot be made. */
async function place(stored: string, target: string): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  await rm(target, { force: true });
  try {
    await link(stored, target);
  } catch {
    await copyFile(stored, target);
  }
}

/** A folder name for a host: `huggingface.co`, `127.0.0.1_8000`, with anything else made safe. */
function hostFolder(host: string): string {
  const url = new URL(host);
  return `${url.host}${url.pathname}`.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/_+$/, '');
}
