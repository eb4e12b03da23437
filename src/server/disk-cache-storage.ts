import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/**
 * The part of the Cache API (`caches.open`, `match`, `put`, `delete`, `keys`) that the engine's
 * model-file store uses (engine/load/storage/: `IntegrityCache`, `PartialDownloads`, and
 * `httpSource`'s offline check), kept in a folder, so that the embedded server stores, checks
 * (size and SHA-256, or a recorded check: checked-records.ts), resumes (Range) and serves offline exactly as the page does in
 * a browser. `installDiskCaches` makes it the process's `caches`.
 *
 * Layout: `{root}/{cache name}/{sha256(url)}.body` and `.json` (the URL, status and headers).
 * A write goes to a temporary file that is renamed into place, the body first and the headers
 * last: an entry is there once its `.json` is, and a process killed mid-write leaves none.
 */
export class DiskCacheStorage {
  readonly #opened = new Map<string, DiskCache>();

  constructor(readonly root: string) {}

  async open(name: string): Promise<DiskCache> {
    let cache = this.#opened.get(name);
    if (!cache) {
      const folder = join(this.root, encodeURIComponent(name));
      await mkdir(folder, { recursive: true });
      this.#opened.set(name, (cache = new DiskCache(folder)));
    }
    return cache;
  }

  async has(name: string): Promise<boolean> {
    return stat(join(this.root, encodeURIComponent(name))).then(
      (s) => s.isDirectory(),
      () => false,
    );
  }

  async delete(name: string): Promise<boolean> {
    const had = await this.has(name);
    this.#opened.delete(name);
    await rm(join(this.root, encodeURIComponent(name)), { recursive: true, force: true });
    return had;
  }

  async keys(): Promise<string[]> {
    return (await readdir(this.root).catch(() => [] as string[])).map((n) => decodeURIComponent(n));
  }
}

interface StoredHead {
  url: string;
  status: number;
  headers: [string, string][];
}

type Key = RequestInfo | URL;

export class DiskCache {
  constructor(readonly folder: string) {}

  #path(key: Key): string {
    return join(this.folder, createHash('sha256').update(urlOf(key)).digest('hex'));
  }

  /** The file that holds the stored body of `key`, or null where there is no entry (a model folder links to it: model-download.ts). */
  async bodyPath(key: Key): Promise<string | null> {
    const path = this.#path(key);
    const whole = await Promise.all([stat(`${path}.json`), stat(`${path}.body`)]).then(
      () => true,
      () => false,
    );
    return whole ? `${path}.body` : null;
  }

  async match(key: Key): Promise<Response | undefined> {
    const path = this.#path(key);
    let head: StoredHead;
    try {
      head = JSON.parse(await readFile(`${path}.json`, 'utf8')) as StoredHead;
    } catch {
      return undefined;
    }
    const size = await stat(`${path}.body`).then(
      (s) => s.size,
      () => null,
    );
    if (size === null) return undefined;
    // The body as a stream from the file: a reader that only wants the headers cancels it unread.
    const body = size === 0 ? null : (Readable.toWeb(createReadStream(`${path}.body`)) as ReadableStream<Uint8Array>);
    return new Response(body, { status: head.status, headers: head.headers });
  }

  async put(key: Key, response: Response): Promise<void> {
    const path = this.#path(key);
    const temp = `${path}.${randomBytes(6).toString('hex')}.part`;
    const file = await open(temp, 'w');
    try {
      if (response.body) {
        const reader = response.body.getReader();
        // Each chunk is written before the next is read: a body of views over one buffer (one-buffer-body.ts) needs no copy.
        for (let r = await reader.read(); !r.done; r = await reader.read()) await file.write(r.value);
      }
      await file.close();
      await rename(temp, `${path}.body`);
    } catch (e) {
      await file.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw e;
    }
    const head: StoredHead = { url: urlOf(key), status: response.status, headers: [...response.headers] };
    await writeFile(`${temp}.json`, JSON.stringify(head));
    await rename(`${temp}.json`, `${path}.json`);
  }

  async delete(key: Key): Promise<boolean> {
    const path = this.#path(key);
    const had = await stat(`${path}.json`).then(
      () => true,
      () => false,
    );
    await rm(`${path}.json`, { force: true });
    await rm(`${path}.body`, { force: true });
    return had;
  }

  async keys(): Promise<Request[]> {
    const names = (await readdir(this.folder).catch(() => [] as string[])).filter((n) => n.endsWith('.json') && !n.includes('.part'));
    const heads = await Promise.all(names.map((n) => readFile(join(this.folder, n), 'utf8').then((t) => JSON.parse(t) as StoredHead, () => null)));
    return heads.filter((h): h is StoredHead => h !== null).map((h) => new Request(h.url));
  }
}

function urlOf(key: Key): string {
  return typeof key === 'string' ? key : key instanceof URL ? key.href : key.url;
}

/** Makes `storage` this process's `caches` (the embedded server's process only: nothing else in Node has one). */
export function installDiskCaches(storage: DiskCacheStorage): void {
  Object.defineProperty(globalThis, 'caches', { value: storage, configurable: true, writable: true });
}
