import type { DeviceCapacity } from './device-capacity.ts';
import type { MemoryEstimate } from './memory-estimate.ts';

/** Which of the device's limits a load would pass. */
export type MemoryLimit = 'gpu_buffer' | 'wasm_heap' | 'device_memory';

/** The first limit a load would pass, with what it needs there and what the device offers. */
export interface Shortfall {
  limit: MemoryLimit;
  needed: number;
  available: number;
}

/**
 * Whether an estimated load fits the device: null where it does, else the first limit it passes,
 * in the order a load meets them (a weight's GPU buffer, the wasm heap, the device's memory). A
 * limit the device does not state, or a need the estimate cannot tell, is not checked.
 * On WebGPU the weights' GPU memory is counted in the device's memory as well: WebGPU does not
 * say how much the GPU has, and on the phones and laptops that run out it is the same memory.
 */
export function shortfall(estimate: MemoryEstimate, capacity: DeviceCapacity): Shortfall | null {
  const checks: Array<[MemoryLimit, number | null, number | null]> = [
    ['gpu_buffer', estimate.largestBufferBytes, capacity.maxBufferBytes],
    ['wasm_heap', estimate.wasmHeapBytes, capacity.wasmHeapBytes],
    ['device_memory', estimate.peakBytes + (estimate.gpuBytes ?? 0), capacity.deviceMemoryBytes],
  ];
  for (const [limit, needed, available] of checks) {
    if (needed !== null && available !== null && needed > available) return { limit, needed, available };
  }
  return null;
}
