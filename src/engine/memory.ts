import type { LoadEvent, MemoryStatus, PrefixCacheStatus } from '../protocol/engine-api.ts';
import type { LanguageModel } from './model/language-model.ts';
import { gpuBufferLedger } from './runtime/gpu-buffer-ledger.ts';

/**
 * Hears a load's progress and keeps the size of each weight file it read (`onnx/<graph>.onnx`
 * and its `_data` files): the model's bytes (MemoryStatus.modelBytes). A fallback from WebGPU to
 * wasm reads the same files again, counted once. Installs the WebGPU buffer count before the load
 * makes any buffer (gpu-buffer-ledger.ts).
 */
export function weightFiles(onEvent: (e: LoadEvent) => void): { onEvent: (e: LoadEvent) => void; bytes(): number } {
  gpuBufferLedger();
  const sizes = new Map<string, number>();
  return {
    onEvent: (e) => {
      if (e.type === 'file' && e.file.startsWith('onnx/') && Number.isFinite(e.total) && e.total > 0) sizes.set(e.file, e.total);
      onEvent(e);
    },
    bytes: () => [...sizes.values()].reduce((sum, n) => sum + n, 0),
  };
}

/**
 * What an engine holds now. WebGPU buffers are those alive in this thread, on WebGPU. The wasm
 * heap is the language model's reading of it (the last pass whose outputs stayed in wasm memory,
 * resident-outputs.ts; null before one).
 */
export function engineMemory(lm: LanguageModel | null, modelBytes: number, prefixCache: PrefixCacheStatus): MemoryStatus {
  if (!lm) return { modelBytes: 0, kvCacheBytes: 0, wasmHeapBytes: null, webgpuBufferBytes: null };
  return {
    modelBytes,
    kvCacheBytes: prefixCache.bytes,
    wasmHeapBytes: lm.device === 'wasm' ? lm.wasmHeapBytes : null,
    webgpuBufferBytes: lm.device === 'webgpu' ? (gpuBufferLedger()?.bytes ?? null) : null,
  };
}
