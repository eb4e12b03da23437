/**
 * The kept rewrites' layout in the Origin Private File System (opfs-kept-store.ts), and what the
 * playground lists and deletes of it with a model's files (ui/model/model-cache.ts):
 *
 *   jev-kept/{SHA-256 of the model file's URL}/url            the URL, for listing by model
 *   jev-kept/{SHA-256 of the model file's URL}/{signature}/{part}
 *
 * (names encoded with `encodeURIComponent`: a part's name may hold a `/`). A file's URL is hashed
 * because an OPFS name is at most 255 bytes.
 */
import { GatheredBytes, type KeptBytes } from './gathered-bytes.ts';

export const KEPT_DIRECTORY = 'jev-kept';
const URL_FILE = 'url';

/** Whether this context has an Origin Private File System. */
export function opfsAvailable(): boolean {
  return typeof (globalThis.navigator as Navigator | undefined)?.storage?.getDirectory === 'function';
}

/** The kept rewrites' root, or null where there is none here or it cannot be opened. */
export async function keptRoot(create: boolean): Promise<FileSystemDirectoryHandle | null> {
  if (!opfsAvailable()) return null;
  try {
    return await (await navigator.storage.getDirectory()).getDirectoryHandle(KEPT_DIRECTORY, { create });
  } catch {
    return null;
  }
}

/** The folder of one model file's kept rewrites: its name, from the file's URL. */
export async function folderName(url: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(url)));
  return Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Writes the URL a folder stands for into it (read back by `keptFiles`). */
export async function nameFolder(folder: FileSystemDirectoryHandle, url: string): Promise<void> {
  await writeWhole(await folder.getFileHandle(URL_FILE, { create: true }), new TextEncoder().encode(url));
}

export interface SyncAccess {
  getSize(): number;
  read(into: Uint8Array, options: { at: number }): number;
  write(from: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  flush(): void;
  close(): void;
}
type SyncCapable = FileSystemFileHandle & { createSyncAccessHandle?: (options?: { mode?: string }) => Promise<SyncAccess> };

/**
 * A file's bytes, in one buffer: through a sync access handle where this is a dedicated worker
 * (the engine's: one `read()` into the buffer, a third of `getFile().arrayBuffer()`'s time and
 * a quarter of the Cache API's for 130 MiB; docs/benchmarks.md), else, or where another context
 * holds the file, through `getFile()`.
 */
export async function readWhole(handle: FileSystemFileHandle): Promise<ArrayBuffer> {
  const access = await openForReads(handle);
  if (access) {
    try {
      const size = access.getSize();
      const buffer = new ArrayBuffer(size);
      if (access.read(new Uint8Array(buffer), { at: 0 }) === size) return buffer;
    } finally {
      access.close();
    }
  }
  return (await handle.getFile()).arrayBuffer();
}

/**
 * A sync access handle on a file, for reads, where this is a dedicated worker (the engine's) and no
 * other context holds the file for writing; else null. `read-only` lets two engines of the origin
 * read at once (a browser that does not know it takes the file's lock). The caller closes it.
 */
export async function openForReads(handle: FileSystemFileHandle): Promise<SyncAccess | null> {
  const sync = handle as SyncCapable;
  if (typeof sync.createSyncAccessHandle !== 'function') return null;
  return sync.createSyncAccessHandle({ mode: 'read-only' }).catch(() => null);
}

/**
 * Writes `bytes` as a file's whole content: through a writable stream where there is one (its
 * write is the browser's, off this thread, and takes effect whole at its close), else through a
 * sync access handle (Safari's workers). Gathered bytes are written piece by piece, never joined.
 */
export async function writeWhole(handle: FileSystemFileHandle, bytes: KeptBytes): Promise<void> {
  const pieces = bytes instanceof GatheredBytes ? bytes.pieces : [{ at: 0, bytes }];
  if (typeof handle.createWritable === 'function') {
    const writable = await handle.createWritable();
    try {
      // One piece at a time, zeros between them: each write is the browser's copy of that piece only.
      let end = 0;
      for (const p of pieces) {
        if (p.at > end) await writable.write(new Uint8Array(p.at - end));
        await writable.write(p.bytes as Uint8Array<ArrayBuffer>);
        end = p.at + p.bytes.byteLength;
      }
      if (bytes.byteLength > end) await writable.write(new Uint8Array(bytes.byteLength - end));
      await writable.close();
    } catch (e) {
      await writable.abort().catch(() => undefined);
      throw e;
    }
    return;
  }
  const access = await (handle as SyncCapable).createSyncAccessHandle!();
  try {
    access.truncate(0);
    access.truncate(bytes.byteLength); // zeros where no piece is
    for (const p of pieces) if (access.write(p.bytes, { at: p.at }) !== p.bytes.byteLength) throw new Error('the file was not written whole');
    access.flush();
  } finally {
    access.close();
  }
}

export interface KeptFile {
  url: string;
  bytes: number;
}

/**
 * The folders of kept rewrites whose model file's URL starts with `prefix`, with that URL; with
 * `unnamed`, also those whose URL was never written (a write cut short), so that they can be deleted.
 */
async function foldersUnder(prefix: string, unnamed = false): Promise<{ name: string; url: string; folder: FileSystemDirectoryHandle }[]> {
  const root = await keptRoot(false);
  if (!root) return [];
  const found: { name: string; url: string; folder: FileSystemDirectoryHandle }[] = [];
  for await (const [name, entry] of root as unknown as AsyncIterable<[string, FileSystemHandle]>) {
    if (entry.kind !== 'directory') continue;
    const folder = entry as FileSystemDirectoryHandle;
    const url = await folder
      .getFileHandle(URL_FILE)
      .then((h) => h.getFile())
      .then((f) => f.text())
      .catch(() => null);
    if (url === null ? unnamed : url.startsWith(prefix)) found.push({ name, url: url ?? '', folder });
  }
  return found;
}

/** The kept files of every model file whose URL starts with `prefix` (`''`: all of them), with their sizes. */
export async function keptFiles(prefix: string): Promise<KeptFile[]> {
  const files: KeptFile[] = [];
  for (const { url, folder } of await foldersUnder(prefix)) {
    for await (const [signature, entry] of folder as unknown as AsyncIterable<[string, FileSystemHandle]>) {
      if (entry.kind !== 'directory') continue;
      for await (const [part, file] of entry as unknown as AsyncIterable<[string, FileSystemHandle]>) {
        if (file.kind !== 'file') continue;
        const bytes = await (file as FileSystemFileHandle).getFile().then((f) => f.size, () => 0);
        files.push({ url: `${url}.jev-rewritten/${decodeURIComponent(signature)}/${decodeURIComponent(part)}`, bytes });
      }
    }
  }
  return files;
}

/** Deletes the kept rewrites of every model file whose URL starts with `prefix`; returns how many files went. */
export async function deleteKeptFiles(prefix: string): Promise<number> {
  const root = await keptRoot(false);
  if (!root) return 0;
  const n = (await keptFiles(prefix)).length;
  for (const { name } of await foldersUnder(prefix, true)) await root.removeEntry(name, { recursive: true }).catch(() => undefined);
  return n;
}
