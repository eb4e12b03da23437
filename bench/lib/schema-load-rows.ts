/** The `load_visits` rows of the bench's JSON (bench/lib/load-visit-rows.ts; docs/benchmarks.md, "Where a load goes"). */
import type { LastLoad } from '../../src/protocol/engine-api.ts';

/** One visit of an app's page: the library's client from `createClient()` to ready and to its first answer. */
export interface LoadVisit {
  /**
   * `first`: a fresh profile, every file from the mirror. `return`: the page opened again at once
   * in the same tab (a reload: the renderer process of the visit before, with whatever it still
   * holds, goes on), files from the browser's cache (and V8's code cache). `fresh`: the same, after
   * the tab has been elsewhere (`about:blank`, so the renderer process of the visit before ends)
   * for 2 s: a user who comes back later, in a new renderer.
   */
  visit: 'first' | 'return' | 'fresh';
  /** The visit's place in the run (0 = the first visit), so repetitions can be told apart. */
  index: number;
  ready_ms: number;
  first_answer_ms: number;
  /** From the page's navigation start to `createClient()`: the app's own script loaded and run. */
  navigation_ms: number;
  /** The sum of the renderers' resident sets, highest while the visit loaded and answered (sampled every 100 ms). */
  peak_renderers_rss_bytes: number | null;
  /** The same, highest until the page was ready (the load itself, without its first answer; since 2026-12-05: absent before). */
  load_peak_renderers_rss_bytes?: number | null;
  /** The engine's own account (`status().lastLoad`); null for the peers. */
  last_load: LastLoad | null;
}

export interface LoadVisitResult {
  /**
   * `engine`: the library's client (bench/page/load.ts); `wllama`: llama.cpp in the same place
   * (bench/page/wllama-load.ts), on the GGUF of the same weights; `pipeline`: transformers.js'
   * `text-generation` pipeline in a worker (bench/page/pipeline-load.ts), on the same ONNX file.
   */
  runtime: 'engine' | 'wllama' | 'pipeline';
  model: string;
  device: 'wasm';
  dtype: string;
  threads: number | null;
  cross_origin_isolated: boolean;
  /** Every visit, in the order run (one profile: the first visit, then the return visits). */
  visits: LoadVisit[];
  /** The return visits' (reloads') median time to ready, and their range. */
  return_ready_ms: { median: number; min: number; max: number } | null;
  /** The fresh visits' median time to ready, and their range. */
  fresh_ready_ms: { median: number; min: number; max: number } | null;
  /** 1-minute load average before and after: the machine is shared. */
  load_average: { start: number; end: number };
}
