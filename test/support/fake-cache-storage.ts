/**
 * A Cache API stand-in for Node (CacheStorage and Cache, in memory), with the browser's failures on
 * demand: a `put` refused as Chromium refuses it without a profile, a body that cannot be read
 * (evicted under its entry). And `navigator.storage.estimate()` with a quota of choice.
 */
export interface FakeCaches {
  caches: CacheStorage;
  /** Entries by cache name, then URL. */
  stores: Map<string, Map<string, { body: Uint8Array; headers: Headers }>>;
  /** Set to make every `put` reject with this error. */
  refusePut: Error | null;
  /** URLs whose stored body rejects when read. */
  unreadable: Set<string>;
}

export function fakeCaches(): FakeCaches {
  const stores = new Map<string, Map<string, { body: Uint8Array; headers: Headers }>>();
  const state: FakeCaches = { caches: null as unknown as CacheStorage, stores, refusePut: null, unreadable: new Set() };
  const open = (name: string): Cache => {
    if (!stores.has(name)) stores.set(name, new Map());
    const entries = stores.get(name)!;
    const key = (r: RequestInfo | URL) => (typeof r === 'string' ? r : r instanceof URL ? r.href : r.url);
    return {
      async match(r: RequestInfo | URL) {
        const hit = entries.get(key(r));
        if (!hit) return undefined;
        if (state.unreadable.has(key(r))) {
          const broken = new ReadableStream({ pull: (c) => c.error(new DOMException('The blob is gone', 'NotReadableError')) });
          return new Response(broken, { headers: hit.headers });
        }
        return new Response(hit.body.slice(), { headers: hit.headers });
      },
      async put(r: RequestInfo | URL, response: Response) {
        const body = new Uint8Array(await response.arrayBuffer());
        if (state.refusePut) throw state.refusePut;
        entries.set(key(r), { body, headers: new Headers(response.headers) });
      },
      async delete(r: RequestInfo | URL) {
        return entries.delete(key(r));
      },
      async keys() {
        return [...entries.keys()].map((u) => new Request(u));
      },
    } as unknown as Cache;
  };
  state.caches = { open: async (name: string) => open(name) } as unknown as CacheStorage;
  return state;
}

/** `navigator.storage` whose `estimate()` reports `quota`, with `usage` the bytes the fake caches hold. */
export function fakeStorage(state: FakeCaches, quota: number): { storage: { estimate(): Promise<StorageEstimate> } } {
  const usage = () => [...state.stores.values()].flatMap((m) => [...m.values()]).reduce((n, e) => n + e.body.byteLength, 0);
  return { storage: { estimate: async () => ({ quota, usage: usage() }) } };
}
