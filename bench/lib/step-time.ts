/**
 * A decode step's time, split at onnxruntime's door: the wall time of the step (forward pass,
 * log-softmax, pick) and the part of it spent inside the decoder session's `run` (copying inputs
 * in, the graph, copying outputs out). What is left — transformers.js around the run, the engine's
 * cache bookkeeping, the log-softmax and the pick — is the step's time outside the graph: the
 * figure that tells a slow row caused by the page or the build's per-call cost from a slow graph.
 *
 * Pure arithmetic, shared by the bench's worker (bench/page/bench.worker.ts) and its rows; no timer here.
 */
import { median } from './schema.ts';

export interface DecodeSteps {
  /** Single-token passes measured. */
  decode_steps: number;
  /** decode_steps ÷ the steps' summed wall time, per second. */
  decode_tps: number;
  /** Median wall time of a step, ms. */
  step_ms_median: number;
  /** 1000 ÷ step_ms_median: the rate of a typical step, robust to the few steps another process stalls. */
  decode_tps_median_step: number;
  /** The 90th percentile and the longest step, ms: how far the stalls reach. */
  step_ms_p90: number;
  step_ms_max: number;
  /** Median time of a step inside the session's run, ms. */
  run_ms_median: number;
  /** Median of each step's wall time minus its time inside run, ms. */
  outside_ms_median: number;
  /** (Σ wall − Σ run) ÷ steps, ms. */
  outside_ms_mean: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * `stepMs[i]`: step i's wall time; `runMs[i]`: its time inside the session's run (the same
 * length). A run longer than its step is a measuring error and throws, as do unequal lengths.
 */
export function decodeSteps(stepMs: readonly number[], runMs: readonly number[]): DecodeSteps {
  if (stepMs.length !== runMs.length) throw new Error(`decodeSteps: ${stepMs.length} step times against ${runMs.length} run times`);
  if (stepMs.length === 0) throw new Error('decodeSteps: no steps');
  const outside = stepMs.map((s, i) => {
    const o = s - runMs[i]!;
    // performance.now() is coarsened (to 5 µs or 100 µs): allow that much, no more.
    if (o < -0.2) throw new Error(`decodeSteps: step ${i} ran ${runMs[i]} ms inside a step of ${s} ms`);
    return Math.max(0, o);
  });
  const wall = stepMs.reduce((a, b) => a + b, 0);
  const run = runMs.reduce((a, b) => a + b, 0);
  return {
    decode_steps: stepMs.length,
    decode_tps: wall > 0 ? (stepMs.length * 1000) / wall : Infinity,
    step_ms_median: r3(median(stepMs)),
    decode_tps_median_step: median(stepMs) > 0 ? r3(1000 / median(stepMs)) : Infinity,
    step_ms_p90: r3(quantile(stepMs, 0.9)),
    step_ms_max: r3(Math.max(...stepMs)),
    run_ms_median: r3(median(runMs)),
    outside_ms_median: r3(median(outside)),
    outside_ms_mean: r3(Math.max(0, wall - run) / stepMs.length),
  };
}

/** The q-quantile of `xs` (0 ≤ q ≤ 1), linear between the two nearest order statistics. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo]! + (s[hi]! - s[lo]!) * (at - lo);
}

/**
 * The same from totals, where steps are not timed one by one (the grid's chat through
 * `Engine.chat`): the decode's wall time and its time inside run, over `steps` single-token passes.
 * Null where there was no step.
 */
export function outsidePerStep(decodeWallMs: number, decodeRunMs: number, steps: number): number | null {
  if (!(steps > 0) || !Number.isFinite(decodeWallMs) || !Number.isFinite(decodeRunMs)) return null;
  return r3(Math.max(0, decodeWallMs - decodeRunMs) / steps);
}

/** `{ median, min, max }` of samples (the spread quoted beside a median). */
export function spread(xs: readonly number[]): { median: number; min: number; max: number } {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
}
