/**
 * The JSON that `npm run bench -- --json FILE` writes. CONTRACT §1 fixes the fields marked
 * (contract); everything else is this bench's own, documented in docs/benchmarks.md.
 */
import type { PeerDtype } from '../peers/models.ts';

export type Device = 'wasm' | 'webgpu';

export interface DecisionResult {
  device: Device; // (contract)
  model: string; // (contract)
  dtype: string;
  questions: number; // (contract) Q
  state_tokens: number; // (contract) tokens of the state text alone
  prefix_tokens: number; // state + system prompt + template: what the engine prefills once
  engine_ms: number; // (contract) median latency of one Engine.decide call
  naive_ms: number; // (contract) median latency of the naive way (Q full-prompt passes)
  speedup: number; // naive_ms / engine_ms
  ceiling: number; // (contract) naive prefilled tokens / engine prefilled tokens
  efficiency: number; // speedup / ceiling
  engine_tokens: number;
  naive_tokens: number;
  engine_passes: number;
  naive_passes: number;
  reps: number;
  /** Fastest samples, and their ratio: the estimate least disturbed by other load on the machine. */
  engine_min_ms: number;
  naive_min_ms: number;
  speedup_best: number;
  engine_samples_ms: number[];
  naive_samples_ms: number[];
  /** CPU seconds the browser's processes used per request (median): robust to other load on the machine. */
  engine_cpu_s: number;
  naive_cpu_s: number;
  /** naive_cpu_s / engine_cpu_s. */
  speedup_cpu: number;
  /** CPU seconds the browser got per wall second during the samples (≈ threads when uncontended). */
  engine_cpu_share: number | null;
  naive_cpu_share: number | null;
  /** Largest |p_engine − p_naive| over answers where both read the same context (a sanity check). */
  max_prob_diff: number | null;
}

export interface ChatResult {
  device: Device; // (contract)
  model: string; // (contract)
  dtype: string;
  prompt_tokens: number;
  new_tokens: number;
  ttft_ms: number; // (contract) engine, median
  decode_tps: number; // (contract) engine, median
  baseline_ttft_ms: number; // (contract) pipeline('text-generation') + TextStreamer, median
  baseline_decode_tps: number; // (contract)
  followup_ttft_ms: number; // (contract) follow-up turn with KV reuse, median
  cold_followup_ttft_ms: number; // (contract) the same turn after another conversation, median
  followup_history_tokens: number;
  followup_prompt_tokens: number;
  followup_cached_tokens: number;
  cold_followup_cached_tokens: number;
  same_text: boolean; // greedy texts of engine and baseline agree
  /** Best samples (fastest time, highest rate): the estimates least disturbed by other load. */
  best: {
    ttft_ms: number;
    decode_tps: number;
    baseline_ttft_ms: number;
    baseline_decode_tps: number;
    followup_ttft_ms: number;
    cold_followup_ttft_ms: number;
  };
  /** CPU seconds the browser got per wall second, median per kind of call (≈ threads when uncontended). */
  cpu_share: { engine: number; baseline: number; followup: number; cold_followup: number };
  /**
   * The engine's decode, per step (median over the repetitions): the time outside the onnxruntime
   * session's run (step wall − run: transformers.js, the engine's loop, streaming) and inside it.
   * Optional; absent in results written before it.
   */
  decode_step_ms?: { outside_graph: number | null; inside_run: number | null };
  reps: number;
  followup_reps: number;
  samples: {
    ttft_ms: number[];
    decode_tps: number[];
    baseline_ttft_ms: number[];
    baseline_decode_tps: number[];
    followup_ttft_ms: number[];
    cold_followup_ttft_ms: number[];
  };
}

export interface LoadResult {
  device: Device;
  model: string;
  dtype: string;
  bytes: number;
  cold_ms: number; // empty browser cache: over the network from the mirror
  warm_ms: number; // a new page, files from the browser's Cache Storage
}

/**
 * A decision that finds its state in the prefix cache (bench/lib/prefix-cache-rows.ts): questions A
 * from cold (`first`), then other questions B on the same state (`repeat`), and B from cold.
 */
export interface PrefixCacheResult {
  model: string; // (contract)
  device: Device; // (contract)
  dtype: string;
  state_tokens: number; // (contract)
  prefix_tokens: number;
  questions: number; // (contract)
  first_ms: number; // (contract) median
  repeat_ms: number; // (contract) median
  cold_repeat_ms: number;
  /** first ÷ repeat (the target), and cold repeat ÷ repeat (the same questions without the cache). */
  speedup: number;
  speedup_same_work: number;
  /** The repeat's token ceiling, first_tokens ÷ repeat_tokens, and speedup ÷ ceiling (the target: ≥ 0.9 at S = 512, Q = 4). Absent in older results. */
  ceiling?: number;
  efficiency?: number;
  cached_tokens: number; // (contract) tokens the repeat reused instead of feeding
  first_tokens: number;
  repeat_tokens: number;
  cold_repeat_tokens: number;
  /** The repeat's answers against the same request from cold. */
  max_prob_diff: number;
  reps: number;
}

/** A new conversation sharing a long system prompt with an earlier one: its time to first token, with the cache and cold. */
export interface PrefixChatResult {
  model: string;
  device: Device;
  dtype: string;
  system_tokens: number;
  prompt_tokens: number;
  cached_tokens: number;
  first_ttft_ms: number;
  repeat_ttft_ms: number;
  cold_repeat_ttft_ms: number;
  speedup_same_work: number;
  reps: number;
}

export interface MemoryResult {
  device: Device;
  model: string;
  dtype: string;
  phase: 'load' | 'decisions' | 'chat';
  /** The loaded dtype's ONNX graph plus its external data (bench/lib/model-bytes.ts). */
  model_bytes: number;
  renderer_peak_rss_bytes: number;
  browser_tree_peak_rss_bytes: number;
  worker_js_heap_peak_bytes: number | null;
  worker_array_buffers_peak_bytes: number | null;
  gpu_buffer_peak_bytes: number | null;
  /** The logits-bound rows (bench/lib/logits-rows.ts): one decision on a state of this many tokens… */
  state_tokens?: number;
  /** …with this bound on one pass's logits (null: none), so passes of at most `pass_tokens`… */
  logits_budget_bytes?: number | null;
  pass_tokens?: number | null;
  /** …and the largest logits tensor a pass returned. */
  logits_peak_bytes?: number;
}

/**
 * One ONNX format (dtype) of one model on one device (bench/lib/formats.ts): the engine's own
 * paths, each format on the same weights, so the rows compare formats and nothing else.
 */
export interface FormatResult {
  device: Device;
  model: string;
  /** 'gqa': onnxruntime-genai builder style (GroupQueryAttention, MatMulNBits…); 'optimum': the Optimum-style graph. */
  export: 'optimum' | 'gqa';
  dtype: string;
  /** measured; refused: the engine refused it at load time (reason); failed: it loaded but a request failed (reason). */
  status: 'measured' | 'refused' | 'failed';
  reason: string | null;
  /** Bytes downloaded for the model (graph + external data + tokenizer and config files). */
  bytes: number | null;
  load_ms: number | null;
  /** Chat prefill: prompt tokens ÷ time to the first token (median). */
  prompt_tokens: number | null;
  ttft_ms: number | null;
  prefill_tps: number | null;
  /** Chat decode: (new tokens − 1) ÷ time after the first token (median). */
  new_tokens: number | null;
  decode_tps: number | null;
  /** One Engine.decide call of `decision_questions` questions on a `decision_state_tokens` state (median). */
  decision_questions: number;
  decision_state_tokens: number | null;
  decision_ms: number | null;
  /** max |p − p_fp32| over every answer of that decision, against the fp32 row of the same model (null for fp32 itself). */
  max_prob_diff_vs_fp32: number | null;
  /** The greedy chat text equals the fp32 row's (first `new_tokens` tokens). */
  same_text_as_fp32: boolean | null;
  /** Peaks over the whole row (load, chat, decisions). */
  renderer_peak_rss_bytes: number | null;
  /** The renderer's peak while the model loads, and while it then serves (chat and decisions, the engine alone). */
  load_peak_rss_bytes: number | null;
  serving_peak_rss_bytes: number | null;
  /** The loaded dtype's graph plus its external data (bench/lib/model-bytes.ts). */
  model_bytes: number | null;
  worker_js_heap_peak_bytes: number | null;
  worker_array_buffers_peak_bytes: number | null;
  reps: number;
  samples: { ttft_ms: number[]; decode_tps: number[]; decision_ms: number[] };
}

/** One `structured` row (CONTRACT §1): greedy chat under a JSON schema against the same chat without one (bench/lib/structured-rows.ts). */
export interface StructuredResult {
  device: Device; // (contract)
  model: string; // (contract)
  dtype: string;
  prompt_tokens: number;
  /** max_tokens of every reply; the schema is bounded so that a constrained reply runs to it. */
  new_tokens: number;
  decode_tps: number; // (contract) without a schema, median
  constrained_decode_tps: number; // (contract) under the schema, median
  /** Median over repetitions of ms per token under the schema ÷ without, run beside each other (target ≤ 1.15). */
  token_cost_ratio: number;
  /** (unconstrained ms per token + fill + masking + accept) ÷ unconstrained: the grammar's measured work added to a step, robust to load. */
  token_cost_ratio_direct: number;
  /** (forward ms + ms outside it under the schema) ÷ (forward ms + ms outside it without), per token: every difference of the step measured, the pass shared. */
  token_cost_ratio_outside_forward: number;
  /** Per token after the first, without a schema: the forward pass, and everything else; under the schema, everything else. */
  forward_ms_per_token: number;
  other_ms_per_token: number;
  constrained_other_ms_per_token: number;
  ttft_ms: number; // without a schema, median
  first_ttft_ms: number; // (contract) a schema not seen before: compiled in the first token
  cached_ttft_ms: number; // (contract) the same schema again: its grammar from the cache
  /** Median over repetitions of cached_ttft_ms − ttft_ms (same prompt, same repetition): noisy, see grammar_first_token_ms. */
  cached_ttft_delta_ms: number;
  /** The grammar's own time in a cached request's first token: cache lookup, matcher, the fills before the first token (target ≤ 5 ms). */
  grammar_first_token_ms: number;
  /** The compile's own time (grammar cache miss), median. */
  compile_ms: number;
  /** The first request under any schema after the load: xgrammar's wasm start, the vocabulary's tables and a compile. */
  first_use_ttft_ms: number;
  mask_ms_per_token: number; // (contract) fill_ms_per_token + masking_ms_per_token
  /** fillNextTokenBitmask (xgrammar's mask ANDed with the JSON-safe mask), per step, median. */
  fill_ms_per_token: number;
  /** maskedArgmax over the logits row, per step, on this run's masks. */
  masking_ms_per_token: number;
  /** The matcher taking the drawn token, per step. */
  accept_ms_per_token: number;
  schema: string;
  reps: number;
  samples: { ms_per_token: number[]; constrained_ms_per_token: number[]; ttft_ms: number[]; first_ttft_ms: number[]; cached_ttft_ms: number[]; grammar_first_token_ms: number[] };
}

/**
 * One `tabs` row (CONTRACT §1, docs/sharing.md): resident memory of all renderers with `tabs` tabs
 * of one model sharing one engine (`share: 'origin'`), against as many independent engines.
 */
export interface TabsResult {
  model: string; // (contract)
  device: Device;
  dtype: string;
  tabs: number; // (contract)
  renderers_rss_bytes: number; // (contract) shared: the sum of every renderer's resident set
  one_tab_rss_bytes: number; // (contract) the same with one tab
  /** renderers ÷ one tab (target at 4 tabs ≤ 1.25). */
  ratio_to_one_tab: number;
  /** The same number of tabs, each with its own engine (`share: 'tab'`). */
  independent_rss_bytes: number;
  independent_ratio_to_one_tab: number;
  /** Engine workers across the tabs: 1 when shared. */
  engines: number;
  independent_engines: number;
  /** The tabs the shared engine said it served (status().sharing.tabs). */
  served_tabs: number | null;
  /** The same as proportional set sizes (shared pages divided among the processes mapping them; null where unreadable). */
  renderers_pss_bytes: number | null;
  independent_pss_bytes: number | null;
  pss_ratio_to_one_tab: number | null;
  /** Each renderer's resident set, largest first: shared, and with an engine per tab. */
  renderer_rss_bytes: number[];
  independent_renderer_rss_bytes: number[];
  /**
   * The control (optional; absent in results written before it): the first tab hosting the engine
   * and the other tabs − 1 a page of the same origin without the library (bench/page/blank.html),
   * the floor any tab of an app costs. Its RSS and PSS, and what the library's relaying tabs add
   * to it: shared − control.
   */
  blank_control?: { rss_bytes: number; pss_bytes: number | null; ratio_to_one_tab: number; pss_ratio_to_one_tab: number | null; relay_over_blank_bytes: number; relay_over_blank_pss_bytes: number | null };
}

export interface TargetResult {
  name: string;
  value: number | null;
  threshold: number;
  met: boolean | null;
  detail: string;
}

export interface BenchResult {
  schema: 'jev-bench/1';
  machine: string; // (contract)
  browser: string; // (contract)
  commit: string; // (contract)
  date: string;
  mode: 'full' | 'quick';
  threads: number | null;
  cross_origin_isolated: boolean;
  adapter: string | null;
  reps: Record<string, unknown>;
  load_average: { start: number[]; end: number[] };
  duration_s: number;
  decisions: DecisionResult[]; // (contract)
  chat: ChatResult[]; // (contract)
  peers: PeerRow[]; // (contract) the wllama comparison, same weights (bench/peers/wllama-peer.ts), one row per dtype
  /** Every ONNX format of the generated models on wasm (and WebGPU with --webgpu), GQA export beside the Optimum one. */
  formats: FormatResult[];
  /** Every repetition behind each peer row, token counts, loads. */
  peer_details: PeerDetail[];
  /** The equal-work check run before the peer timings: same tokenization, same greedy tokens. */
  peer_agreement: PeerAgreement[];
  /** Decisions that find their state in the prefix cache (docs/prefix-cache.md). */
  prefix_cache: PrefixCacheResult[]; // (contract)
  /** Chat under a JSON schema against chat without one (docs/structured-output.md). */
  structured: StructuredResult[]; // (contract)
  /** Renderers' memory with 1, 2 and 4 tabs sharing one engine, against independent engines (bench/lib/tabs-rows.ts). */
  tabs: TabsResult[]; // (contract)
  /** New conversations sharing a long system prompt with an earlier one. */
  prefix_cache_chat: PrefixChatResult[];
  load: LoadResult[];
  memory: MemoryResult[];
  targets: TargetResult[];
  notes: string[];
  /**
   * What the engine ran on (optional; absent in results written before it): the onnxruntime-web
   * build its worker loaded, and the Chromium version its worker's userAgent names.
   */
  runtime?: RuntimeInfo;
  /** `--only ort-builds`: the JSPI build against the asyncify build, side by side (bench/lib/ort-build-rows.ts). Optional. */
  ort_builds?: OrtBuildRow[];
}

export interface RuntimeInfo {
  /** 'jspi' or 'asyncify' (src/engine/runtime/ort-build.ts); null where none was reported. */
  ort_build: string | null;
  /**
   * "156.0.8078.108": the worker's User-Agent Client Hints (navigator.userAgentData's fullVersionList),
   * else the major version its userAgent string names ("156.0.0.0" since Chromium's user-agent
   * reduction); null where neither names one.
   */
  chromium: string | null;
  user_agent: string | null;
}

/** The Chromium version a userAgent names (`Chrome/…` or `HeadlessChrome/…`); null for none. */
export function chromiumOfUserAgent(ua: string | null | undefined): string | null {
  return (ua && /(?:Headless)?Chrome\/(\d+(?:\.\d+)*)/.exec(ua)?.[1]) || null;
}

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

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
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
export type OrtBuildName = 'jspi' | 'asyncify';

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
