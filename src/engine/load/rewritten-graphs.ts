import { planCompact } from '../graph/compact-external.ts';
import { Int8HeadKernel } from '../runtime/int8-head-kernel.ts';
import { releaseView } from './release-buffer.ts';
import { INLINE_WEIGHTS, type MountedFile, type RewriteCounts, type SessionRewrite } from './rewrite-session.ts';
import { CacheKeptStore } from './storage/cache-kept-store.ts';
import { GatheredBytes, type KeptBytes } from './storage/gathered-bytes.ts';
import { opfsAvailable } from './storage/opfs-kept-files.ts';
import { OpfsKeptStore } from './storage/opfs-kept-store.ts';
import { closePart } from './storage/part-on-disk.ts';
import type { KeptCheck, KeptPlace, KeptStore } from './storage/kept-store.ts';
import type { LoadTimer } from './load-timing.ts';

/**
 * The version of what the session rewrites make (engine/graph/, rewrite-session.ts, the head
 * kernel's matrix layout). A stored rewrite of another version is made again. Bump it with every
 * change to what they write: test/engine/load-return-visit.test.ts fails until it is bumped
 * (it keeps a digest of those sources per version).
 */
export const REWRITE_VERSION = 7;

/** A model file as the load read it: its URL and the SHA-256 its storage checked (model-handoff.ts). */
export interface RewriteSource {
  url: string;
  sha256: string;
}

interface Manifest {
  version: number;
  /** The SHA-256 of the model file the rewrite was made from. */
  source: string;
  signature: string;
  inline: boolean;
  counts: RewriteCounts;
  /** The stored parts, in order: `graph`, each added file by its mount path, then `kernel-q`, `kernel-s`; each as its store checked it. */
  parts: ({ name: string } & KeptCheck)[];
}

/**
 * The mount name of the bytes a kept rewrite still reads from the model's own file, gathered
 * (compact-external.ts), where they are at most the store's `keepsFileShare` of it: the kept
 * rewrite then needs nothing of the file, and a return visit does not read it (model-fetch.ts,
 * `ModelHandoff.unneeded`).
 */
export const KEPT_WEIGHTS = 'jev-kept-weights';
const KERNEL_Q = 'kernel-q';
const KERNEL_S = 'kernel-s';
const MANIFEST = 'manifest.json';

/**
 * The session rewrites kept (issue 62: at q4 on wasm they were a fifth of a return visit): what a
 * rewrite made from a model file (its graph, the int8 weights and heads, the head kernel's
 * matrix) stored beside that file, so that the next load of the same file
 * with the same rewrites reads them instead of making them.
 *
 * Each part is stored on its own under the model file's URL, the rewrite's signature and its name
 * (storage/kept-store.ts: in the Origin Private File System where there is one, read there in a
 * third of the Cache API's time; else in the model cache), so that the playground lists and deletes
 * them with the model's files; and a manifest last, naming the source file's SHA-256,
 * `REWRITE_VERSION` and each part's SHA-256 and size (and, in the OPFS, its sample's, which a read
 * is checked against): a manifest of another source or version, or a part that is not the one it
 * names, is a miss, and the rewrite is made (and stored) again over it. Best effort: a store or
 * read that fails is a miss.
 *
 * What the rewritten graph reads of the model's own file (q4: 4 MiB of 176 MiB; q8: 106 of 215
 * MiB; fp32: 409 of 517 MiB) is stored as a part of its own (`KEPT_WEIGHTS`), and the kept graph
 * reads that instead, where it is at most the store's `keepsFileShare` of the file (the OPFS: all
 * of it, read there in a third of the Cache API's time; the Cache API: half): such a rewrite is
 * `complete` (it needs nothing of the file), and the return visit creates the session without
 * reading the file at all. That part is written from the file's own bytes, piece by piece
 * (gathered-bytes.ts), not copied whole while the session is created.
 */
export class RewrittenGraphs {
  constructor(readonly store: KeptStore = opfsAvailable() ? new OpfsKeptStore() : new CacheKeptStore()) {}

  /** Manifests read during this load, by source and signature. */
  readonly #manifests = new Map<string, Promise<Manifest | null>>();

  #place(source: RewriteSource, signature: string, part: string): KeptPlace {
    return { url: source.url, signature, part };
  }

  /**
   * Whether a rewrite of `source` under `signature` is stored that needs nothing of the file (its
   * manifest's word: `get` still checks every part, and a load whose `get` then misses reads the file).
   */
  async complete(source: RewriteSource, signature: string): Promise<boolean> {
    const manifest = await this.#manifest(source, signature, null);
    return manifest !== null && !manifest.inline;
  }

  /**
   * The manifest stored for `source` under `signature` where it is of this version and names
   * them, else null; read once per load (one RewrittenGraphs per load: load-model.ts), since
   * `complete` asks before the fetch and `get` after it.
   */
  #manifest(source: RewriteSource, signature: string, timer: LoadTimer | null): Promise<Manifest | null> {
    const key = JSON.stringify([source.url, signature]);
    let manifest = this.#manifests.get(key);
    if (!manifest) {
      manifest = (async () => {
        try {
          const head = await this.store.read(this.#place(source, signature, MANIFEST), null, timer);
          if (!head) return null;
          const m = JSON.parse(new TextDecoder().decode(head)) as Manifest;
          return m.version === REWRITE_VERSION && m.source === source.sha256 && m.signature === signature ? m : null;
        } catch {
          return null;
        }
      })();
      this.#manifests.set(key, manifest);
    }
    return manifest;
  }

  /**
   * The stored rewrite of `source` under `signature`, or null. Its buffers are the caller's (released once the session exists).
   * With `opened`, the files the session mounts are opened where the store can (`KeptStore.open`:
   * part-on-disk.ts, read by onnxruntime as it copies each initializer): the caller closes them
   * (`closePart`) once the session exists or failed.
   */
  async get(source: RewriteSource, signature: string, timer: LoadTimer | null = null, opened = false): Promise<SessionRewrite | null> {
    const read: Uint8Array[] = [];
    const endRead = timer?.begin('storageRead');
    try {
      const manifest = await this.#manifest(source, signature, timer);
      if (!manifest) return null;
      const mounted = (name: string) => name !== 'graph' && name !== KERNEL_Q && name !== KERNEL_S;
      const store = this.store;
      const readPart = async (part: Manifest['parts'][number]): Promise<Uint8Array | null> => {
        const place = this.#place(source, signature, part.name);
        if (opened && store.open && mounted(part.name)) return store.open(place, part, timer);
        const whole = await store.read(place, part, timer);
        return whole && new Uint8Array(whole);
      };
      // The parts asked for side by side: the Cache API serves them in parallel; the OPFS store reads each at once, on this thread.
      const hits = await Promise.all(manifest.parts.map(readPart));
      for (const hit of hits) if (hit) read.push(hit);
      manifest.parts.forEach((part, i) => {
        if (!hits[i]) throw new Error(`stored rewrite part ${part.name} is not the one its manifest names`);
      });
      const byName = new Map(manifest.parts.map((p, i) => [p.name, read[i]!]));
      const added: MountedFile[] = manifest.parts.filter((p) => mounted(p.name)).map((p) => ({ path: p.name, data: byName.get(p.name)! }));
      let kernel: Int8HeadKernel | null = null;
      const shape = manifest.counts.kernelHead;
      if (shape) {
        kernel = Int8HeadKernel.create(shape.v, shape.h);
        const q = byName.get(KERNEL_Q);
        const s = byName.get(KERNEL_S);
        if (!kernel || !q || !s || q.byteLength !== kernel.q.byteLength || s.byteLength !== kernel.s.byteLength) throw new Error('the stored head kernel does not fit');
        kernel.q.set(new Int8Array(q.buffer, q.byteOffset, q.byteLength));
        new Uint8Array(kernel.s.buffer, kernel.s.byteOffset, kernel.s.byteLength).set(s);
        releaseView(q);
        releaseView(s);
      }
      return { graph: byName.get('graph')!, inline: manifest.inline, added, kernel, counts: manifest.counts };
    } catch {
      for (const bytes of read) if (!closePart(bytes)) releaseView(bytes);
      return null;
    } finally {
      endRead?.();
    }
  }

  /**
   * Stores `rewrite` (made from `source`, whose bytes are `model`, under `signature`): its parts,
   * then the manifest; where it reads at most the store's `keepsFileShare` of `model`, with those bytes as a part
   * of their own (`KEPT_WEIGHTS`) and its graph reading them. The parts' bytes are read while this
   * runs: they must stay until it settles. Resolves whether all of it was stored.
   */
  async put(source: RewriteSource, signature: string, made: SessionRewrite, model: Uint8Array, timer: LoadTimer | null = null): Promise<boolean> {
    const rewrite = complete(made, model, this.store.keepsFileShare);
    const parts: [string, KeptBytes][] = [['graph', rewrite.graph as Uint8Array<ArrayBuffer>], ...rewrite.added.map((f): [string, KeptBytes] => [f.path, f.data as KeptBytes])];
    const kernel = rewrite.kernel;
    if (kernel) parts.push([KERNEL_Q, new Uint8Array(kernel.q.buffer as ArrayBuffer, kernel.q.byteOffset, kernel.q.byteLength)], [KERNEL_S, new Uint8Array(kernel.s.buffer as ArrayBuffer, kernel.s.byteOffset, kernel.s.byteLength)]);
    const manifest: Manifest = { version: REWRITE_VERSION, source: source.sha256, signature, inline: rewrite.inline, counts: rewrite.counts, parts: [] };
    this.#manifests.delete(JSON.stringify([source.url, signature])); // what this load read before is replaced
    try {
      // No manifest names parts half written over: the one before goes first.
      await this.store.remove(this.#place(source, signature, MANIFEST));
      for (const [name, bytes] of parts) {
        const check = await this.store.write(this.#place(source, signature, name), bytes, timer);
        if (!check) return false;
        manifest.parts.push({ name, ...check });
      }
      const json = new TextEncoder().encode(JSON.stringify(manifest));
      const stored = (await this.store.write(this.#place(source, signature, MANIFEST), json, timer)) !== null;
      if (stored && this.store.kind === 'opfs') await dropCacheCopy(source, signature);
      return stored;
    } catch {
      return false;
    }
  }
}

/**
 * Deletes a rewrite of `source` under `signature` that the model cache holds (where the engine kept
 * rewrites before the OPFS held them): its parts and manifest, as a copy the OPFS's replaces.
 */
async function dropCacheCopy(source: RewriteSource, signature: string): Promise<void> {
  const cache = new CacheKeptStore();
  const place = (part: string): KeptPlace => ({ url: source.url, signature, part });
  const old = await cache.read(place(MANIFEST), null, null);
  if (!old) return;
  let names: string[] = [];
  try {
    names = (JSON.parse(new TextDecoder().decode(old)) as Manifest).parts.map((p) => p.name);
  } catch {
    // A manifest that cannot be read: its parts are not known; the manifest still goes.
  }
  for (const name of [MANIFEST, ...names]) await cache.remove(place(name));
}

/** A rewrite as it is kept: its added parts may be gathered from the model's own bytes. */
type KeptRewrite = Omit<SessionRewrite, 'added'> & { added: { path: string; data: Uint8Array | GatheredBytes }[] };

/** `rewrite` as it is kept: needing nothing of `model` where it reads at most `share` of it (compact-external.ts), else as made. */
function complete(rewrite: SessionRewrite, model: Uint8Array, share: number): KeptRewrite {
  if (!rewrite.inline) return rewrite;
  const plan = planCompact(rewrite.graph, INLINE_WEIGHTS, model.byteLength, KEPT_WEIGHTS);
  if (!plan) return { ...rewrite, inline: false };
  if (plan.size > model.byteLength * share) return rewrite;
  const data = new GatheredBytes(plan.size, plan.pieces.map((p) => ({ at: p.at, bytes: model.subarray(p.from, p.from + p.length) })));
  return { ...rewrite, graph: plan.graph, inline: false, added: [...rewrite.added, { path: KEPT_WEIGHTS, data }] };
}
