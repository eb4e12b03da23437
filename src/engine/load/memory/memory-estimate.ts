import type { Device, Dtype } from '../../model/language-model.ts';

/**
 * How much memory a load will need, from its files' sizes, before any of them is downloaded.
 *
 * The factors are docs/memory.md's measurements ("The file handed to onnxruntime, not copied for
 * it", the after column: the SmolLM2-135M-shaped model on wasm, Chromium 156): the renderer's
 * loading peak is its own ~215 MiB, one copy of the downloaded file (the buffer handed to
 * onnxruntime) and what onnxruntime's wasm heap holds for the weights, so
 *
 *   peak = RENDERER_BASE_BYTES + (1 + heapFactor) × file bytes
 *   wasm heap = heapFactor × file bytes
 *
 * The heap factor folds in what the doc names beside the weights: fp16 held as fp32 on wasm, the
 * packed copy of a tied lm_head (which a wasm load no longer makes where the head stays float32,
 * src/engine/graph/tied-head.ts: the estimate leans high by that much), q4's projections as int8
 * products, onnxruntime's arena. Measured on one small model, where the embedding weighs most, it
 * leans high for larger models: the check it feeds refuses only what exceeds a hard limit.
 *
 * WebGPU is not measured here (SwiftShader only). There the weights go to GPU buffers as they are
 * in the file (float16 stays float16: the f16 formats run only with shader-f16), the renderer holds
 * the file once while the session is made, and the largest buffer is the embedding matrix, read
 * from config.json.
 */

const MiB = 2 ** 20;

/** The renderer before any model: the page and its worker (docs/memory.md, "What is left"). */
export const RENDERER_BASE_BYTES = 215 * MiB;

/** docs/memory.md's measured rows: the model's file and the renderer's loading peak on wasm, MiB. */
export const MEASURED_LOADS: Readonly<Record<Dtype, { fileMiB: number; loadingPeakMiB: number }>> = {
  fp32: { fileMiB: 517, loadingPeakMiB: 1536 },
  fp16: { fileMiB: 259, loadingPeakMiB: 1305 },
  q4: { fileMiB: 176, loadingPeakMiB: 760 },
  q4f16: { fileMiB: 113, loadingPeakMiB: 749 },
  q8: { fileMiB: 215, loadingPeakMiB: 821 },
};

/** Bytes of onnxruntime's wasm heap per byte of the file, for a format loaded on wasm. */
export function wasmHeapFactor(dtype: Dtype): number {
  const { fileMiB, loadingPeakMiB } = MEASURED_LOADS[dtype];
  return (loadingPeakMiB * MiB - RENDERER_BASE_BYTES - fileMiB * MiB) / (fileMiB * MiB);
}

/**
 * What the 8-bit embedding and lm_head (src/engine/graph/int8-head.ts) take off a wasm load's
 * peak, in bytes per element of the embedding matrix. MEASURED_LOADS predate that rewrite: their
 * heap held the float matrix and the copy onnxruntime packs for a tied lm_head. Measured
 * 2026-11-26 on the 49,152 × 576 matrix (docs/memory.md, "The quantized formats' embedding and
 * lm_head are 8-bit on wasm"), load peak before → after: q4 864 → 716 MiB, q8 794 → 699 MiB.
 * Formats not measured take the smaller of the two, so that the estimate still leans high.
 */
const HEAD_ELEMENTS_MEASURED = 49152 * 576;
export const INT8_HEAD_SAVING_PER_ELEMENT: Readonly<Record<Dtype, number>> = (() => {
  const q4 = ((864 - 716) * MiB) / HEAD_ELEMENTS_MEASURED;
  const q8 = ((794 - 699) * MiB) / HEAD_ELEMENTS_MEASURED;
  const unmeasured = Math.min(q4, q8);
  return { q4, q8, q4f16: unmeasured, fp16: unmeasured, fp32: unmeasured };
})();

/** Bytes per element of the embedding matrix (the largest weight) in each format's graph on WebGPU. */
const EMBEDDING_ELEMENT_BYTES: Readonly<Record<Dtype, number>> = {
  fp32: 4,
  fp16: 2,
  // The hub's 4-bit exports keep the embedding in the graph's float type (docs/memory.md).
  q4: 4,
  q4f16: 2,
  // Whether the quantizer reached the Gather is not known: the smallest it could be, so that no
  // load is refused for a buffer it may not need.
  q8: 1,
};

export interface MemoryEstimate {
  device: Device;
  dtype: Dtype;
  /** The format's files: its ONNX graph and external data. */
  fileBytes: number;
  /** The renderer's resident set at the load's peak. */
  peakBytes: number;
  /** What onnxruntime's wasm heap must hold (on wasm; null elsewhere). */
  wasmHeapBytes: number | null;
  /** GPU memory for the weights (on WebGPU; null elsewhere). */
  gpuBytes: number | null;
  /** The largest single GPU buffer the weights need, the embedding matrix (on WebGPU, where config.json says its shape). */
  largestBufferBytes: number | null;
}

/**
 * The memory a load of `fileBytes` of `dtype` on `device` will need; `config` is the model's
 * config.json. `int8Head`: the load rewrites the embedding and lm_head to 8 bits (on wasm,
 * session-rewrites.ts `rewritesOn`); with config.json's shape, the estimate is that much lower.
 */
export function estimateLoad(device: Device, dtype: Dtype, fileBytes: number, config: unknown = null, options: { int8Head?: boolean } = {}): MemoryEstimate {
  if (device === 'webgpu') {
    const shape = embeddingShape(config);
    return {
      device,
      dtype,
      fileBytes,
      peakBytes: RENDERER_BASE_BYTES + fileBytes,
      wasmHeapBytes: null,
      gpuBytes: fileBytes,
      largestBufferBytes: shape ? shape.vocab * shape.hidden * EMBEDDING_ELEMENT_BYTES[dtype] : null,
    };
  }
  const shape = options.int8Head && device === 'wasm' ? embeddingShape(config) : null;
  const saving = shape ? Math.floor(INT8_HEAD_SAVING_PER_ELEMENT[dtype] * shape.vocab * shape.hidden) : 0;
  // Never below the file's own bytes: the weights are in the heap whatever the head.
  const heap = Math.max(Math.ceil(wasmHeapFactor(dtype) * fileBytes) - saving, fileBytes);
  return {
    device,
    dtype,
    fileBytes,
    peakBytes: RENDERER_BASE_BYTES + fileBytes + heap,
    wasmHeapBytes: device === 'wasm' ? heap : null,
    gpuBytes: null,
    largestBufferBytes: null,
  };
}

/** config.json's `vocab_size` × `hidden_size` (or its `text_config`'s), where both are given. */
function embeddingShape(config: unknown): { vocab: number; hidden: number } | null {
  const top = (config ?? {}) as Record<string, unknown>;
  for (const c of [top, (top['text_config'] ?? {}) as Record<string, unknown>]) {
    const vocab = c['vocab_size'];
    const hidden = c['hidden_size'] ?? c['n_embd'] ?? c['d_model'];
    if (typeof vocab === 'number' && typeof hidden === 'number' && vocab > 0 && hidden > 0) return { vocab, hidden };
  }
  return null;
}
