/**
 * The bench JSON's rows of the sections that run on their own (`--only formats`, `structured`,
 * `tabs`): `formats`, `structured`, `tabs`. CONTRACT §1 fixes the fields marked (contract); the rest
 * is documented in docs/benchmarks.md.
 */
import type { Device } from './schema-target-rows.ts';

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

/** The structured compile rows (issue 57): compile time per schema set, and the mask's cost per token. */
export interface CompileRow {
  set: string;
  schemas: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  slowest: string;
}
export interface MaskRow {
  schema: string;
  tokens: number;
  constrained_ms_per_token: number;
  unconstrained_ms_per_token: number;
  ratio: number;
}

export interface StructuredCompileResult {
  compile: CompileRow[];
  /** On the slowest schema to compile. */
  mask: MaskRow | null;
  /** On everyday schemas (a free-text string, a bounded one, an unanchored pattern, zod's user). */
  everyday_masks?: MaskRow[];
}

/** The `extraction` rows (issue 59, bench/lib/extraction-rows.ts): F fields sharing the state against one request per field. */
export interface ExtractionRow {
  /** The engine measured: in Node (onnxruntime-node, in process) or in the page (the worker's engine in Chromium, wasm). Absent in results written before 2026-12-05: Node. */
  where?: 'node' | 'page';
  fields: number;
  shared_ms: number;
  separate_ms: number;
  ms_per_field: number;
  /** separate_ms / shared_ms. */
  speedup: number;
  /** Every token the model read: input not from the cache, and decoded value tokens. */
  fed_tokens_shared: number;
  fed_tokens_separate: number;
  decoded_tokens: number;
  /** fed_tokens_separate / fed_tokens_shared: the token ceiling. */
  ceiling: number;
  /** speedup / ceiling (target ≥ 0.9 at F ≥ 4). */
  of_ceiling: number;
  reps: number;
  /** Node: whether the batched rows were written in place (LanguageModel.inPlaceRows); absent before 2026-12-05 (later) and in the page. */
  rows_in_place?: boolean;
}
/** The copy constraint's mask per decoding step at one vocabulary. */
export interface CopyMaskRow {
  model: string;
  vocabulary: number;
  copy_mask_ms_per_step: number;
  first_ms: number;
  steps: number;
}
