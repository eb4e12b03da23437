import { releaseBuffer } from '../release-buffer.ts';
import { sampleBytes, sampleOf } from './checked-records.ts';
import { digest } from './digest.ts';
import { GatheredBytes, type KeptBytes } from './gathered-bytes.ts';
import { folderName, keptRoot, nameFolder, openForReads, readWhole, writeWhole } from './opfs-kept-files.ts';
import { PartOnDisk } from './part-on-disk.ts';
import { storageRoom } from './storage-room.ts';
import { fits } from './unstored-file.ts';
import type { LoadTimer } from '../load-timing.ts';
import type { KeptCheck, KeptPlace, KeptStore } from './kept-store.ts';

/**
 * Kept parts in the Origin Private File System (issue 62: the storage read was the second phase
 * of a q4 return visit, 0.8–1.4 s for 130 MiB from the Cache API), laid out as opfs-kept-files.ts
 * says. Integrity as the model cache keeps it (checked-records.ts): a part is hashed when stored,
 * and its SHA-256, size and the SHA-256 of its 1 MiB sample go into the manifest that names it;
 * a read checks the size and the sample against them, and a part that does not match is a miss
 * (the rewrite is made again over it). Best effort: a store or read that fails is a miss.
 */
export class OpfsKeptStore implements KeptStore {
  readonly kind = 'opfs';
  /** A part is read from here in about a third of the Cache API's time: a copy of the whole of what a graph reads saves time at any share (docs/benchmarks.md). */
  readonly keepsFileShare = 1;

  async #folder(place: KeptPlace, create: boolean): Promise<FileSystemDirectoryHandle | null> {
    const root = await keptRoot(create);
    if (!root) return null;
    const model = await root.getDirectoryHandle(await folderName(place.url), { create }).catch(() => null);
    if (!model) return null;
    if (create) await nameFolder(model, place.url);
    return model.getDirectoryHandle(encodeURIComponent(place.signature), { create }).catch(() => null);
  }

  /** Whether a part of `size` bytes whose sample is `sample()` is the one `expect` names (its size and its sample's SHA-256); without `expect`, any part. */
  async #matches(expect: KeptCheck | null, size: number, sample: () => Uint8Array<ArrayBuffer>, timer: LoadTimer | null): Promise<boolean> {
    return !expect || (size === expect.bytes && !!expect.sample && (await digest(sample(), timer)) === expect.sample);
  }

  /** The file of the part at `place`, where there is one. */
  async #file(place: KeptPlace): Promise<FileSystemFileHandle | null> {
    const folder = await this.#folder(place, false);
    return (await folder?.getFileHandle(encodeURIComponent(place.part)).catch(() => null)) ?? null;
  }

  /** `handle`'s bytes, where they are the part `expect` names (else null, released). */
  async #readChecked(handle: FileSystemFileHandle, expect: KeptCheck | null, timer: LoadTimer | null): Promise<ArrayBuffer | null> {
    const bytes = await readWhole(handle);
    if (await this.#matches(expect, bytes.byteLength, () => sampleBytes(bytes), timer)) return bytes;
    releaseBuffer(bytes);
    return null;
  }

  async read(place: KeptPlace, expect: KeptCheck | null, timer: LoadTimer | null): Promise<ArrayBuffer | null> {
    try {
      const handle = await this.#file(place);
      return handle && (await this.#readChecked(handle, expect, timer));
    } catch {
      return null;
    }
  }

  /**
   * The part at `place`, checked as `read` checks it, mounted for the session without being read
   * (part-on-disk.ts: onnxruntime reads each initializer's range as it copies it), where this is
   * a worker with sync access handles; elsewhere read whole. Null where it is a miss.
   */
  async open(place: KeptPlace, expect: KeptCheck | null, timer: LoadTimer | null): Promise<Uint8Array | null> {
    let access: Awaited<ReturnType<typeof openForReads>> = null;
    try {
      const handle = await this.#file(place);
      if (!handle) return null;
      access = await openForReads(handle);
      if (!access) {
        const whole = await this.#readChecked(handle, expect, timer);
        return whole && new Uint8Array(whole);
      }
      const reads = access;
      const size = reads.getSize();
      const sample = () =>
        sampleOf(size, (s, e) => {
          const into = new Uint8Array(e - s);
          if (reads.read(into, { at: s }) !== e - s) throw new Error('short read');
          return into;
        });
      if (!(await this.#matches(expect, size, sample, timer))) {
        reads.close();
        return null;
      }
      access = null; // the part's now: closed by its `close()`
      return new PartOnDisk({ read: (into, at) => reads.read(into, { at }), close: () => reads.close() }, size, timer);
    } catch {
      access?.close();
      return null;
    }
  }

  async write(place: KeptPlace, bytes: KeptBytes, timer: LoadTimer | null): Promise<KeptCheck | null> {
    // Where estimate() leaves no room for it, nothing is written.
    if (!fits(bytes.byteLength, await storageRoom())) return null;
    try {
      // Pieces are written as they are, never gathered: hashed by their sample alone, as every read is checked.
      const gathered = bytes instanceof GatheredBytes;
      const check = { sha256: gathered ? null : await digest(bytes, timer), bytes: bytes.byteLength, sample: await digest(gathered ? bytes.sample() : sampleBytes(bytes), timer) };
      const folder = await this.#folder(place, true);
      if (!folder) return null;
      await writeWhole(await folder.getFileHandle(encodeURIComponent(place.part), { create: true }), bytes);
      return check;
    } catch {
      await this.remove(place);
      return null;
    }
  }

  async remove(place: KeptPlace): Promise<void> {
    const folder = await this.#folder(place, false).catch(() => null);
    await folder?.removeEntry(encodeURIComponent(place.part)).catch(() => undefined);
  }
}
