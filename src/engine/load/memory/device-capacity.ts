import type { Device } from '../../model/language-model.ts';

/**
 * What the device offers a load, as far as a page can know it before downloading anything:
 * `navigator.deviceMemory` (GiB; Chromium rounds it down to a power of two and caps it at 8, so
 * it is a lower bound), the 4 GiB that onnxruntime-web's 32-bit wasm heap can address, and on
 * WebGPU the adapter's `maxBufferSize` and `maxStorageBufferBindingSize` (onnxruntime asks its
 * device for the adapter's own limits, and binds each weight as one storage buffer) and whether
 * it has `shader-f16`. WebGPU says nothing of the GPU's memory itself.
 */

/** The most a 32-bit WebAssembly memory can grow to: 65,536 pages of 64 KiB. */
export const WASM32_HEAP_BYTES = 4 * 2 ** 30;

export interface DeviceCapacity {
  device: Device;
  /** `navigator.deviceMemory` in bytes, or null where the browser does not say (Firefox, Safari, Node). */
  deviceMemoryBytes: number | null;
  /** The wasm heap's ceiling (on wasm; null elsewhere). */
  wasmHeapBytes: number | null;
  /** The largest buffer a weight may be bound as: the smaller of the two WebGPU limits (on WebGPU; null elsewhere or unknown). */
  maxBufferBytes: number | null;
  maxBufferSize: number | null;
  maxStorageBufferBindingSize: number | null;
  shaderF16: boolean;
}

interface AdapterLike {
  limits?: { maxBufferSize?: number; maxStorageBufferBindingSize?: number };
  features?: { has(name: string): boolean };
}

/** What `device` offers here; `nav` is the worker's (or page's) navigator. */
export async function deviceCapacity(device: Device, nav: unknown = globalThis.navigator): Promise<DeviceCapacity> {
  const gib = (nav as { deviceMemory?: unknown } | undefined)?.deviceMemory;
  const deviceMemoryBytes = typeof gib === 'number' && gib > 0 ? gib * 2 ** 30 : null;
  const base = { device, deviceMemoryBytes, wasmHeapBytes: null, maxBufferBytes: null, maxBufferSize: null, maxStorageBufferBindingSize: null, shaderF16: false };
  if (device === 'wasm') return { ...base, wasmHeapBytes: WASM32_HEAP_BYTES };
  if (device !== 'webgpu') return base;
  const gpu = (nav as { gpu?: { requestAdapter(): Promise<unknown> } } | undefined)?.gpu;
  const adapter = ((await gpu?.requestAdapter().catch(() => null)) ?? null) as AdapterLike | null;
  const limit = (n: unknown) => (typeof n === 'number' && n > 0 ? n : null);
  const maxBufferSize = limit(adapter?.limits?.maxBufferSize);
  const maxStorageBufferBindingSize = limit(adapter?.limits?.maxStorageBufferBindingSize);
  const both = [maxBufferSize, maxStorageBufferBindingSize].filter((n): n is number => n !== null);
  return {
    ...base,
    maxBufferSize,
    maxStorageBufferBindingSize,
    maxBufferBytes: both.length > 0 ? Math.min(...both) : null,
    shaderF16: adapter?.features?.has('shader-f16') ?? false,
  };
}
