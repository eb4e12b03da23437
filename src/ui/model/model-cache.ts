import { deleteKeptFiles, keptFiles, type KeptFile } from '../../engine/load/storage/opfs-kept-files.ts';

/**
 * What this browser keeps of a model: transformers.js stores every file it downloads in the Cache
 * API cache `transformers-cache`, keyed by the file's URL, `{host}/{model}/resolve/main/{file}`;
 * the engine keeps what its load rewrote of a file beside it, in the Origin Private File System
 * (engine/load/storage/opfs-kept-files.ts), listed here as `{file}.jev-rewritten/{signature}/{part}`.
 */
export const CACHE_NAME = 'transformers-cache';

export interface CachedFile {
  url: string;
  /** The path inside the model's repository, e.g. `onnx/model.onnx`. */
  file: string;
  bytes: number;
}

export interface CacheReport {
  files: CachedFile[];
  bytes: number;
}

export function cacheAvailable(): boolean {
  return typeof caches !== 'undefined';
}

/** The URL prefix of a model's files under a host. */
export function modelPrefix(host: string, model: string): string {
  return `${host.replace(/\/+$/, '')}/${model}/resolve/`;
}

async function sizeOf(response: Response | undefined): Promise<number> {
  if (!response) return 0;
  const header = Number(response.headers.get('content-length'));
  if (Number.isFinite(header) && header > 0) return header;
  // A Blob of a cached body is backed by the cache's storage: its size costs no read.
  return (await response.blob()).size;
}

async function entriesUnder(prefix: string): Promise<{ cache: Cache; requests: Request[] }> {
  const cache = await caches.open(CACHE_NAME);
  const requests = (await cache.keys()).filter((r) => r.url.startsWith(prefix));
  return { cache, requests };
}

/** The files of one model in the cache, or null where this browser has no Cache API. */
export async function cachedModel(host: string, model: string): Promise<CacheReport | null> {
  if (!cacheAvailable()) return null;
  const prefix = modelPrefix(host, model);
  const { cache, requests } = await entriesUnder(prefix);
  const files: CachedFile[] = [];
  const entries: KeptFile[] = [];
  for (const request of requests) entries.push({ url: request.url, bytes: await sizeOf(await cache.match(request)) });
  for (const { url, bytes } of [...entries, ...(await keptFiles(prefix))]) {
    const rest = url.slice(prefix.length);
    files.push({ url, file: rest.slice(rest.indexOf('/') + 1), bytes });
  }
  files.sort((a, b) => a.file.localeCompare(b.file));
  return { files, bytes: files.reduce((n, f) => n + f.bytes, 0) };
}

/** Everything in the cache (all models, and any runtime files stored beside them). */
export async function cacheTotal(): Promise<{ entries: number; bytes: number } | null> {
  if (!cacheAvailable()) return null;
  const { cache, requests } = await entriesUnder('');
  const kept = await keptFiles('');
  let bytes = kept.reduce((n, f) => n + f.bytes, 0);
  for (const request of requests) bytes += await sizeOf(await cache.match(request));
  return { entries: requests.length + kept.length, bytes };
}

/** Deletes a model's files from the cache; returns how many entries went. */
export async function deleteCachedModel(host: string, model: string): Promise<number> {
  if (!cacheAvailable()) return 0;
  const { cache, requests } = await entriesUnder(modelPrefix(host, model));
  let deleted = await deleteKeptFiles(modelPrefix(host, model));
  for (const request of requests) if (await cache.delete(request)) deleted += 1;
  return deleted;
}

/** A model's stored files under one host, for the list of what could be deleted to make room. */
export interface StoredModel {
  /** `{host}/{model}`, the part of its files' URLs before `/resolve/`. */
  prefix: string;
  bytes: number;
  files: number;
}

/** Every model stored in the cache, largest first. */
export async function storedModels(): Promise<StoredModel[]> {
  if (!cacheAvailable()) return [];
  const { cache, requests } = await entriesUnder('');
  const byPrefix = new Map<string, StoredModel>();
  const files: KeptFile[] = await keptFiles('');
  for (const request of requests) files.push({ url: request.url, bytes: await sizeOf(await cache.match(request)) });
  for (const { url, bytes } of files) {
    const at = url.indexOf('/resolve/');
    if (at < 0) continue;
    const prefix = url.slice(0, at);
    const entry = byPrefix.get(prefix) ?? { prefix, bytes: 0, files: 0 };
    entry.bytes += bytes;
    entry.files += 1;
    byPrefix.set(prefix, entry);
  }
  return [...byPrefix.values()].sort((a, b) => b.bytes - a.bytes);
}

/** Deletes every stored file of a model listed by `storedModels`; returns how many entries went. */
export async function deleteStoredModel(prefix: string): Promise<number> {
  if (!cacheAvailable()) return 0;
  const { cache, requests } = await entriesUnder(`${prefix}/resolve/`);
  let deleted = await deleteKeptFiles(`${prefix}/resolve/`);
  for (const request of requests) if (await cache.delete(request)) deleted += 1;
  return deleted;
}
