/**
 * The bench JSON's rows that one target (model, device) writes (bench/lib/target-run.ts):
 * `decisions`, `chat`, `load`, `prefix_cache`, `prefix_cache_chat`, `memory`. CONTRACT §1 fixes
 * the fields marked (contract); the rest is documented in docs/benchmarks.md.
 */
/** Where a row ran (every row of a target, and the formats and structured rows). */
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
