/**
 * onnxruntime-web's own trace points (env.trace) in the engine worker: while tracing, its
 * console.time/timeEnd pairs are summed per label here instead of printed.
 */
import { env } from '@huggingface/transformers';

const traceTotals = new Map<string, number>();
const traceStarts = new Map<string, number>();
let capturing = false;
const origTime = console.time.bind(console);
const origTimeEnd = console.timeEnd.bind(console);
console.time = (label?: string) => {
  if (!capturing) return origTime(label);
  traceStarts.set(label ?? 'default', performance.now());
};
console.timeEnd = (label?: string) => {
  if (!capturing) return origTimeEnd(label);
  const key = label ?? 'default';
  const t0 = traceStarts.get(key);
  if (t0 === undefined) return;
  traceStarts.delete(key);
  traceTotals.set(key, (traceTotals.get(key) ?? 0) + performance.now() - t0);
};
/** Turns onnxruntime-web's trace on (its timings collected here) or off. */
export function traceSet(on: boolean): void {
  // transformers.js exposes a shallow copy of onnxruntime's env; its `wasm` object is shared, and
  // onnxruntime reads env.wasm.trace while env.trace is unset
  const wasm = env.backends.onnx.wasm as unknown as { trace?: boolean };
  wasm.trace = on;
  capturing = on;
  traceTotals.clear();
  traceStarts.clear();
}
/** The trace's totals per label since the last take, in ms. */
export function traceTake(): Record<string, number> {
  const out = Object.fromEntries(traceTotals);
  traceTotals.clear();
  return out;
}
