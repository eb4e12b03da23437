/**
 * The JSON that `npm run bench -- --json FILE` writes. CONTRACT §1 fixes the fields marked
 * (contract); everything else is this bench's own, documented in docs/benchmarks.md. The rows, by
 * who writes them: schema-target-rows.ts, schema-feature-rows.ts, schema-peer-rows.ts (re-exported
 * here, so that a writer imports its row from this module).
 */
import type { ChatResult, DecisionResult, Device, LoadResult, MemoryResult, PrefixCacheResult, PrefixChatResult } from './schema-target-rows.ts';
import type { CopyMaskRow, ExtractionRow, FormatResult, StructuredCompileResult, StructuredResult, TabsResult } from './schema-feature-rows.ts';
import type { OrtBuildRow, PeerAgreement, PeerDetail, PeerRow } from './schema-peer-rows.ts';
import type { LoadVisitResult } from './schema-load-rows.ts';

export type { ChatResult, DecisionResult, Device, LoadResult, MemoryResult, PrefixCacheResult, PrefixChatResult } from './schema-target-rows.ts';
export type { FormatResult, StructuredResult, TabsResult } from './schema-feature-rows.ts';
export type { OrtBuildName, OrtBuildRow, OrtBuildSide, PeerAgreement, PeerDetail, PeerRow, SideMemory } from './schema-peer-rows.ts';
export type { LoadVisit, LoadVisitResult } from './schema-load-rows.ts';

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
  /** Schema compile times and the mask's cost on the slowest schema, in Node (bench/lib/structured-compile-rows.ts); absent where not measured. */
  structured_compile?: StructuredCompileResult;
  /** Extraction: F fields sharing the state against one request per field (bench/lib/extraction-rows.ts); absent where not measured. */
  extraction?: ExtractionRow[];
  /** The extraction copy constraint's mask per step, per vocabulary; absent where not measured. */
  copy_mask?: CopyMaskRow[];
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
  /** `--only load`: an app's start-up, first and return visits, with the engine's breakdown (bench/lib/load-visit-rows.ts). Optional. */
  load_visits?: LoadVisitResult[];
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

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
