/**
 * Outputs that stay in wasm memory (build/ort-patch.mjs, a pinned patch of onnxruntime-web): while
 * `run` runs, the CPU outputs of onnxruntime-web's wasm backend are views over its heap, released
 * when the tensor is disposed, and inputs already in the heap are passed by pointer, so a KV cache
 * goes from one pass to the next without a copy. Only around the engine's own passes, which
 * dispose every tensor they get (tensor-ledger.ts): transformers.js' own generation does not
 * dispose CPU tensors and would leak wasm memory. Where the patch is absent, or the page is not
 * cross-origin isolated (no shared memory), outputs are copied as before.
 */
export async function withResidentOutputs<T>(run: () => Promise<T>): Promise<T> {
  const g = globalThis as { __ortResidentOutputs?: boolean };
  const before = g.__ortResidentOutputs;
  g.__ortResidentOutputs = true;
  try {
    return await run();
  } finally {
    g.__ortResidentOutputs = before;
  }
}

/** Whether a tensor's data is a view over shared (wasm) memory rather than a copy of its own. */
export function residesInWasm(data: unknown): boolean {
  const buffer = (data as { buffer?: unknown } | null)?.buffer;
  return typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer;
}

/**
 * The size of the wasm memory a resident tensor's data is a view over (its shared buffer is that
 * memory as of the pass that made it); null for a copy.
 */
export function wasmHeapBytes(data: unknown): number | null {
  return residesInWasm(data) ? ((data as { buffer: SharedArrayBuffer }).buffer.byteLength) : null;
}
