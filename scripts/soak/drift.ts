/**
 * The soak's verdict from its samples: after the warm-up (the level at request `warmup`), no
 * memory figure may rise past `bound` (5 %) of that level, and between requests the engine may
 * hold no tensor but its prefix cache's (none once it is emptied). Pure, so that it is
 * unit-tested apart from a browser.
 *
 * A level is the median of the readings over a window of requests (`window`, 100 by default:
 * the level at request 100 is the median of those from 100 to 199), and every later window is
 * compared by its own median: one reading caught while V8 or the allocator had not yet handed
 * pages back is not a leak, a level that keeps rising is.
 */

/** One reading, taken between requests, after request `i`. */
export interface Sample {
  i: number;
  /** Seconds since the soak began. */
  t: number;
  rendererRss: number;
  /** The renderer's private (anonymous) resident memory, and its mapped files and shared memory (memory.ts); null in older runs. */
  rendererAnon: number | null;
  rendererFile?: number | null;
  rendererShmem?: number | null;
  treeRss: number;
  /** The page's V8 heap in use after a GC (reported); null where not read. */
  pageHeap?: number | null;
  /** The service worker's V8 heap in use after a GC (reported); null where not read. */
  swHeap?: number | null;
  workerHeap: number;
  workerBuffers: number;
  /** The worker's objects without V8's compiled code (a heap snapshot, taken at some samples only; else null). */
  workerObjects: number | null;
  wasmHeap: number | null;
  cacheBytes: number;
  cacheEntries: number;
  /** Live tensors beyond the prefix cache's (must be 0). */
  strayTensors: number;
  /** Live tensors once the prefix cache was emptied, just before the memory was read (must be 0). */
  liveAfterClear: number;
}

/** The figures whose drift is reported. */
export const FIGURES = ['rendererRss', 'rendererAnon', 'pageHeap', 'swHeap', 'workerHeap', 'workerObjects', 'wasmHeap'] as const;
export type Figure = (typeof FIGURES)[number];
/**
 * Those held to the bound by default. The worker's heap in use counts V8's compiled code, which
 * grows while the JIT warms up over thousands of requests (heap snapshots show code objects, not
 * data): its objects without that code are bounded, the whole is reported.
 */
export const BOUNDED: readonly Figure[] = ['rendererRss', 'rendererAnon', 'workerObjects', 'wasmHeap'];

export interface Drift {
  figure: Figure;
  /** Whether the bound applies to it (else it is only reported). */
  bounded: boolean;
  level: number;
  /** Highest and lowest window medians after the level's, as a fraction of the level (0.01 = +1 %). */
  max: number;
  min: number;
  /** The first request of the window with the highest. */
  maxAt: number;
}

export interface Verdict {
  ok: boolean;
  /** The first request of the level's window. */
  levelAt: number | null;
  /** Requests after the warm-up the bound was checked over. */
  checkedRequests: number;
  drift: Drift[];
  problems: string[];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Checks `samples` (in request order). */
export function judge(samples: readonly Sample[], options: { warmup?: number; bound?: number; window?: number; bounded?: readonly Figure[] } = {}): Verdict {
  const bounded = options.bounded ?? BOUNDED;
  const warmup = options.warmup ?? 100;
  const bound = options.bound ?? 0.05;
  const window = options.window ?? 100;
  const problems: string[] = [];
  for (const s of samples) {
    if (s.strayTensors !== 0) problems.push(`after request ${s.i}: ${s.strayTensors} live tensors beyond the prefix cache's`);
    if (s.liveAfterClear !== 0) problems.push(`after request ${s.i}: ${s.liveAfterClear} live tensors with the prefix cache emptied`);
  }
  // Windows of `window` requests from the warm-up on; the first is the level.
  const windows: Sample[][] = [];
  for (const s of samples) {
    if (s.i < warmup) continue;
    const k = Math.floor((s.i - warmup) / window);
    (windows[k] ??= []).push(s);
  }
  const full = windows.filter((w) => w && w.length > 0);
  if (full.length < 2) return { ok: false, levelAt: null, checkedRequests: 0, drift: [], problems: [...problems, `fewer than two windows of ${window} requests after request ${warmup}: the soak ended in its warm-up`] };
  const [levelWindow, ...later] = full as [Sample[], ...Sample[][]];
  const drift: Drift[] = [];
  for (const figure of FIGURES) {
    const values = (w: Sample[]) => w.map((s) => s[figure]).filter((v): v is number => typeof v === 'number');
    const first = values(levelWindow);
    if (first.length === 0 || median(first) <= 0) continue; // no wasm heap figure on WebGPU or without isolation
    const base = median(first);
    let max = -Infinity;
    let min = Infinity;
    let maxAt = levelWindow[0]!.i;
    for (const w of later) {
      const v = values(w);
      if (v.length === 0) continue;
      const r = median(v) / base - 1;
      if (r > max) [max, maxAt] = [r, w[0]!.i];
      min = Math.min(min, r);
      if (r > bound && bounded.includes(figure)) problems.push(`${figure} over requests ${w[0]!.i}–${w.at(-1)!.i}: median ${median(v)} bytes, +${(r * 100).toFixed(1)} % over its level at request ${levelWindow[0]!.i} (${base}); bound ${(bound * 100).toFixed(0)} %`);
    }
    if (max > -Infinity) drift.push({ figure, bounded: bounded.includes(figure), level: base, max, min, maxAt });
  }
  const checkedRequests = later.at(-1)!.at(-1)!.i - levelWindow[0]!.i;
  return { ok: problems.length === 0, levelAt: levelWindow[0]!.i, checkedRequests, drift, problems };
}
