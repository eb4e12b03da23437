/** The GPU script's results (run.ts) and their Markdown table. */
import { median } from '../lib/schema.ts';
import type { GpuAdapterInfo } from './node-webgpu.ts';

export { median };

export interface GpuRow {
  device: string;
  dtype: string;
  adapter: GpuAdapterInfo | null;
  /** wasm threads; null on WebGPU. */
  threads: number | null;
  load_ms: number;
  prompt_tokens: number;
  /** Prompt tokens per second to the first token of a cold chat (median; every repetition beside it). */
  prefill_tps: number;
  prefill_tps_all: number[];
  decode_tokens: number;
  /** Tokens per second after the first (median), or null where every completion stopped at one token. */
  decode_tps: number | null;
  decode_tps_all: number[];
  /** One decision of `questions` questions on a state of `state_tokens`, from cold (median). */
  decision_ms: number;
  decision_ms_all: number[];
  state_tokens: number;
  questions: number;
  int8_head: unknown;
  /** The last decision's probabilities, question → answer → p. */
  answers: Record<string, Record<string, number>>;
}

export interface GpuRun {
  date: string;
  machine: string;
  node: string;
  /** onnxruntime-web's wasm build that ran (src/engine/runtime/ort-build.ts). */
  ort_build: string;
  dawn: string | null;
  webgpu_error: string | null;
  adapter: GpuAdapterInfo | null;
  model: string;
  commit: string | null;
  rows: GpuRow[];
  skipped: { device: string; dtype: string; why: string }[];
}

/** The largest |Δp| between two decisions' probabilities over the answers both give, or null where they share none. */
export function maxProbabilityGap(a: GpuRow['answers'], b: GpuRow['answers']): number | null {
  let gap: number | null = null;
  for (const [q, answers] of Object.entries(a)) {
    for (const [answer, p] of Object.entries(answers)) {
      const other = b[q]?.[answer];
      if (other !== undefined) gap = Math.max(gap ?? 0, Math.abs(p - other));
    }
  }
  return gap;
}

const fmt = (x: number | null, digits = 1) => (x === null ? '–' : x.toFixed(digits));
const spread = (xs: number[], digits = 1) => (xs.length > 1 ? ` (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})` : '');

/** Rows as docs/benchmarks.md shows them, with each WebGPU figure's ratio to wasm of the same dtype. */
export function gpuRowsMarkdown(run: GpuRun): string {
  const adapter = run.adapter ? [run.adapter.vendor, run.adapter.architecture, run.adapter.description].filter(Boolean).join(' / ') : `none (${run.webgpu_error})`;
  const lines = [
    `GPU bench, ${run.model}, ${run.date}${run.commit ? `, commit ${run.commit}` : ''}`,
    `machine: ${run.machine}; Node ${run.node}, onnxruntime-web ${run.ort_build} build; WebGPU adapter: ${adapter}`,
    '',
    '| device | dtype | prefill tok/s | decode tok/s | decision ms | load ms | vs wasm (prefill, decode, decision) | decision max abs Δp vs wasm |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of run.rows) {
    const wasm = run.rows.find((w) => w.device === 'wasm' && w.dtype === r.dtype);
    const vs =
      r.device === 'webgpu' && wasm
        ? `${fmt(r.prefill_tps / wasm.prefill_tps, 2)}×, ${r.decode_tps && wasm.decode_tps ? fmt(r.decode_tps / wasm.decode_tps, 2) : '–'}×, ${fmt(wasm.decision_ms / r.decision_ms, 2)}× faster`
        : '';
    const gap = r.device === 'webgpu' && wasm ? maxProbabilityGap(r.answers, wasm.answers) : null;
    const device = r.device === 'wasm' ? `wasm (${r.threads} thread${r.threads === 1 ? '' : 's'})` : 'webgpu';
    lines.push(
      `| ${device} | ${r.dtype} | ${fmt(r.prefill_tps)}${spread(r.prefill_tps_all)} | ${fmt(r.decode_tps)}${spread(r.decode_tps_all)} | ${fmt(r.decision_ms)}${spread(r.decision_ms_all)} | ${r.load_ms} | ${vs} | ${gap === null ? '' : gap.toExponential(1)} |`,
    );
  }
  for (const s of run.skipped) lines.push(`| ${s.device} | ${s.dtype} | not run: ${s.why.replace(/\|/g, '/').slice(0, 300)} | | | | | |`);
  const first = run.rows[0];
  if (first) lines.push('', `prefill: a cold chat of ${first.prompt_tokens} prompt tokens to its first token; decode: ${first.decode_tokens} greedy tokens; decision: ${first.questions} questions on a ${first.state_tokens}-token state, from cold; medians of the repetitions (range in brackets).`);
  return `${lines.join('\n')}\n`;
}
