/**
 * The bench JSON's rows of the comparisons beside the engine: `peers`, `peer_details` and
 * `peer_agreement` (wllama on the GGUF of the same weights, bench/peers/), and `ort_builds`
 * (onnxruntime-web's JSPI build against its asyncify build, bench/lib/ort-build-rows.ts).
 */
import type { PeerDtype } from '../peers/models.ts';

/** A summary of bench/peers/check-wllama.ts's AgreementResult for one model. */
export interface PeerAgreement {
  model: string;
  dtype: string;
  bound: number;
  pass: boolean;
  greedy_steps: number;
  identical_greedy_tokens: boolean;
  /** Quantized: the first step where the greedy tokens part (at a near-tie), null when identical. */
  greedy_first_mismatch?: number | null;
  max_abs_dlogprob_top: number;
  tokenization_agree: string; // "k/n" test strings
}

/** One row of CONTRACT §1 `peers`. */
export interface PeerRow {
  peer: 'wllama';
  model: string;
  /** The engine's dtype; wllama runs the GGUF of the same weights (fp32 → F32, q4 → Q4_0, q8 → Q8_0). */
  dtype: PeerDtype;
  device: 'wasm';
  threads: number;
  prefill_tps: number;
  decode_tps: number;
  engine_prefill_tps: number;
  engine_decode_tps: number;
}

/** What stands behind a row: every repetition, token counts, load times. */
export interface PeerDetail {
  model: string;
  dtype: PeerDtype;
  threads: number;
  prompt_tokens: { engine: number; wllama: number };
  decode_tokens: number;
  reps: number;
  wllama: {
    multithread: boolean;
    threads: number;
    load_ms: number;
    prefill_tps: number[];
    decode_tps: number[];
    wall_ms: number[];
    cache_n: number[];
  };
  engine: {
    threads: number;
    load_ms: number;
    prefill_tps: number[];
    decode_tps: number[];
    step_ms_median: number[];
    /** Per repetition, the median decode step's time outside the session's run (step wall − run), ms. Optional. */
    outside_ms_median?: number[];
    /** The onnxruntime-web build the engine's worker loaded. Optional. */
    ort_build?: string | null;
    /** The lm_head as loaded: 'int8' (the 8-bit embedding and head), 'float, held once' (tied-head.ts) or 'float'. Optional. */
    head?: string | null;
  };
  /**
   * Each side's renderer memory, beside its model's bytes (null where the browser's processes could
   * not be read: no `marker`, or not Linux). `serving_peak_rss_bytes` is null where the peak could not
   * be restarted after the load (/proc/<pid>/clear_refs not writable).
   */
  memory: { engine: SideMemory; wllama: SideMemory } | null;
  /** 1-minute load average of the machine before and after (other processes share the cores). */
  loadavg: [number, number];
  /** 1-minute load average at the start of each measurement, in order (wllama/engine alternating). */
  loadavg_per_run: number[];
}

export interface SideMemory {
  /** The file(s) this side loads: the ONNX graph and its external data, or the GGUF. */
  model_bytes: number;
  /** The renderer's peak resident set from its start through the model's load. */
  load_peak_rss_bytes: number | null;
  /** The renderer's peak resident set from the end of the load through the last run. */
  serving_peak_rss_bytes: number | null;
}

/** onnxruntime-web's wasm builds (src/engine/runtime/ort-build.ts). */
export type OrtBuildName = 'cpu' | 'jspi' | 'asyncify';

/** One build's side of a row: medians over the repetitions, and every repetition. */
export interface OrtBuildSide {
  /** The build the engine reported loading (differs from the one asked only where the browser lacks JSPI). */
  build: OrtBuildName | null;
  load_ms: number;
  prefill_tps: number;
  decode_tps: number;
  /** Median over repetitions of 1000 ÷ the median step: a typical step's rate, robust to stalls from other processes. */
  decode_tps_median_step: number;
  /** Best repetition's decode and prefill (the least disturbed). */
  best_decode_tps: number;
  best_prefill_tps: number;
  step_ms: number;
  /** Median over repetitions of each repetition's longest step, ms. */
  step_ms_max: number;
  /** Median per step of the time inside the session's run / outside it (step wall − run). */
  run_ms: number;
  outside_ms: number;
  samples: { prefill_tps: number[]; decode_tps: number[]; step_ms: number[]; step_ms_p90: number[]; step_ms_max: number[]; run_ms: number[]; outside_ms: number[] };
}

/** One row of `ort_builds` in the bench JSON (an optional field: bench/lib/schema.ts). */
export interface OrtBuildRow {
  model: string;
  dtype: string;
  device: 'wasm';
  threads: number;
  prompt_tokens: number;
  decode_steps: number;
  reps: number;
  jspi: OrtBuildSide;
  asyncify: OrtBuildSide;
  /** JSPI ÷ asyncify, of the medians (> 1: JSPI faster); `_median_step`: of the typical steps' rates. */
  decode_ratio: number;
  decode_ratio_median_step: number;
  prefill_ratio: number;
  /** 1-minute load average at each measurement, in order. */
  loadavg_per_run: number[];
}
