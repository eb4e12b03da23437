import { releaseBuffer } from './release-buffer.ts';

/**
 * Model files handed from the engine's fetch (model-fetch.ts) straight to onnxruntime's
 * `InferenceSession.create` (session-rewrites.ts), past transformers.js.
 *
 * transformers.js reads a model file's body into a buffer of its own, the size the response
 * announces, and hands that buffer to `InferenceSession.create`. Read from the engine's one buffer,
 * that is a second whole copy of the file, resident through the session's creation, when
 * onnxruntime adds the weights' tensors on top: the loading peak held the file three times
 * (docs/memory.md). Instead, the fetch keeps the file's one buffer here and gives transformers.js a
 * body that is only a ticket naming it. transformers.js' buffer is then the ticket followed by
 * pages it never writes (never resident), and the session rewrite, seeing the ticket, creates the
 * session from the deposited bytes.
 *
 * Download progress is reported by the fetch, as the bytes arrive (`onProgress`): transformers.js
 * sees only the ticket arrive.
 *
 * A stored file whose session the load can create from a kept rewrite alone (rewritten-graphs.ts,
 * `unneeded`) is not read at all: its ticket names a file left unread (`depositUnread`), which the
 * session rewrite reads after all (`fill`) only where the kept rewrite turns out to be missing.
 */
export class ModelHandoff {
  /** Each deposited file's bytes, by the ticket that names them. */
  private readonly deposited = new Map<string, Uint8Array>();
  private readonly urls = new Set<string>();
  private readonly sources = new WeakMap<Uint8Array, { url: string; sha256: string }>();
  /** Files deposited unread: their ticket, and how to read them. */
  private readonly unread = new Map<Uint8Array, { ticket: string; read: () => Promise<ReadFile> }>();
  private readonly prefix = `${TICKET_MAGIC}${randomToken()}:`;
  private next = 0;
  /**
   * Whether the stored file at `url`, of checked SHA-256 `sha256`, need not be read: what its
   * session is made from is kept (session-rewrites.ts sets it; null: every file is read).
   */
  unneeded: ((url: string, sha256: string) => Promise<boolean>) | null = null;

  constructor(private readonly onProgress: (url: string, loaded: number, total: number) => void = () => {}) {}

  /** Whether a file at `url` is one transformers.js hands to `InferenceSession.create`: a graph or its external data. */
  static carries(url: string): boolean {
    const path = url.replace(/[?#].*$/, '');
    return /\.onnx(?:_data(?:_\d+)?|\.data)?$/.test(path);
  }

  /** Whether the fetch handed off the file at `url` (its progress then comes from the fetch, not transformers.js). */
  handled(url: string): boolean {
    return this.urls.has(url);
  }

  /** Download progress of a file being handed off. */
  progress(url: string, loaded: number, total: number): void {
    this.urls.add(url);
    this.onProgress(url, loaded, total);
  }

  /**
   * Keeps `buffer` (the whole file at `url`; the handoff owns it now) and returns the ticket that
   * names it. `sha256`: the file's SHA-256 where its storage checked it (integrity-cache.ts), so
   * that what is made from it can be kept under it (rewritten-graphs.ts).
   */
  deposit(url: string, buffer: ArrayBuffer, sha256: string | null = null): Uint8Array<ArrayBuffer> {
    this.urls.add(url);
    const ticket = `${this.prefix}${this.next++}`;
    const file = new Uint8Array(buffer);
    this.deposited.set(ticket, file);
    if (sha256) this.sources.set(file, { url, sha256 });
    return new TextEncoder().encode(ticket);
  }

  /**
   * A ticket for the file at `url` (of checked SHA-256 `sha256`), not read: `claim` gives a
   * stand-in that `sourceOf` names and `isUnread` tells apart, and `fill` reads it with `read`.
   */
  depositUnread(url: string, sha256: string, read: () => Promise<ReadFile>): Uint8Array<ArrayBuffer> {
    this.urls.add(url);
    const ticket = `${this.prefix}${this.next++}`;
    const standIn = new Uint8Array(0);
    this.deposited.set(ticket, standIn);
    this.sources.set(standIn, { url, sha256 });
    this.unread.set(standIn, { ticket, read });
    return new TextEncoder().encode(ticket);
  }

  /** Whether `bytes` (as `claim` gives them) stand for a file deposited unread. */
  isUnread(bytes: Uint8Array): boolean {
    return this.unread.has(bytes);
  }

  /** The bytes of the file `standIn` stands for (`depositUnread`), read now and deposited under its ticket in its place. */
  async fill(standIn: Uint8Array): Promise<Uint8Array> {
    const entry = this.unread.get(standIn);
    if (!entry) return standIn;
    const { bytes, sha256 } = await entry.read();
    const file = new Uint8Array(bytes);
    this.unread.delete(standIn);
    this.deposited.set(entry.ticket, file);
    if (sha256) this.sources.set(file, { url: this.sources.get(standIn)!.url, sha256 });
    return file;
  }

  /** The URL and checked SHA-256 of deposited `bytes` (as `claim` gives them), or null where not deposited with one. */
  sourceOf(bytes: Uint8Array): { url: string; sha256: string } | null {
    return this.sources.get(bytes) ?? null;
  }

  /**
   * The deposited bytes that `bytes` names, when it begins with one of this handoff's tickets (a
   * buffer transformers.js read a ticket into); otherwise null. They stay deposited until released.
   */
  claim(bytes: Uint8Array): Uint8Array | null {
    // A ticket ends where transformers.js' buffer does, or at the first of the zeros it never wrote.
    for (const [ticket, file] of this.deposited) if (startsWith(bytes, ticket) && (bytes[ticket.length] ?? 0) === 0) return file;
    return null;
  }

  /** Releases the deposited `bytes` (their session exists, or the load is over). Returns the bytes released. */
  release(bytes: Uint8Array): number {
    for (const [ticket, file] of this.deposited) {
      if (file !== bytes) continue;
      this.deposited.delete(ticket);
      this.unread.delete(file);
      return releaseBuffer(bytes.buffer);
    }
    return 0;
  }

  /** Releases everything still deposited (files read but never given to a session). Returns the bytes released. */
  releaseAll(): number {
    let released = 0;
    for (const file of [...this.deposited.values()]) released += this.release(file);
    return released;
  }
}

/** A file read: its bytes, and its SHA-256 where its storage checked it. */
export interface ReadFile {
  bytes: ArrayBuffer;
  sha256: string | null;
}

/** What every ticket begins with. Not the start of any ONNX file: a model proto begins with a field tag byte. */
export const TICKET_MAGIC = 'jev-model-handoff:';

function startsWith(bytes: Uint8Array, text: string): boolean {
  if (bytes.byteLength < text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[i] !== text.charCodeAt(i)) return false;
  return true;
}

function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');
}

let current: ModelHandoff | null = null;

/** The handoff of the load in progress (session-rewrites.ts opens it), or null: files are then read as they are. */
export function currentHandoff(): ModelHandoff | null {
  return current;
}

/** Runs `load` with `handoff` current, releasing whatever it still holds when `load` settles. */
export async function withHandoff<T>(handoff: ModelHandoff, load: () => Promise<T>): Promise<T> {
  const before = current;
  current = handoff;
  try {
    return await load();
  } finally {
    current = before;
    handoff.releaseAll();
  }
}
