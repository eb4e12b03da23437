import { describe, expect, it } from 'vitest';
import { WASM32_HEAP_BYTES, type DeviceCapacity } from '../../src/engine/load/memory/device-capacity.ts';
import { estimateLoad } from '../../src/engine/load/memory/memory-estimate.ts';
import { shortfall } from '../../src/engine/load/memory/memory-fit.ts';
import { findRegistryModel } from '../../src/ui/model/model-registry.ts';
import { memoryAlternative, registryAlternative } from '../../src/ui/model/registry-alternative.ts';

const GiB = 2 ** 30;
const capacity = (device: 'wasm' | 'webgpu', deviceMemoryGiB: number, shaderF16 = false): DeviceCapacity => ({
  device,
  deviceMemoryBytes: deviceMemoryGiB * GiB,
  wasmHeapBytes: device === 'wasm' ? WASM32_HEAP_BYTES : null,
  maxBufferBytes: null,
  maxBufferSize: null,
  maxStorageBufferBindingSize: null,
  shaderF16,
});

describe("the registry's model offered when a model has no format that fits", () => {
  it('names a registry model and dtype that the same estimate lets through, never the refused one', () => {
    for (const [device, gib, f16] of [['wasm', 2, false], ['wasm', 8, false], ['webgpu', 4, false], ['webgpu', 4, true]] as const) {
      const cap = capacity(device, gib, f16);
      const alt = registryAlternative('onnx-community/Llama-3.2-3B-Instruct', device, cap);
      expect(alt, `${device} ${gib} GiB`).not.toBeNull();
      expect(alt!.model).not.toBe('onnx-community/Llama-3.2-3B-Instruct');
      expect(findRegistryModel(alt!.model)!.files[alt!.dtype]).toBe(alt!.bytes);
      expect(shortfall(estimateLoad(device, alt!.dtype, alt!.bytes), cap)).toBeNull();
      if (device === 'webgpu' && !f16) expect(['fp16', 'q4f16']).not.toContain(alt!.dtype);
    }
  });

  it('offers more on a device with more memory, and nothing where nothing fits', () => {
    const small = registryAlternative('x', 'wasm', capacity('wasm', 1))!;
    const large = registryAlternative('x', 'wasm', capacity('wasm', 8))!;
    expect(large.bytes).toBeGreaterThan(small.bytes);
    expect(registryAlternative('x', 'wasm', capacity('wasm', 0.25))).toBeNull();
  });

  it("takes the engine's named alternative first, else the registry's for the refusal's device and capacity", () => {
    const named = { model: 'org/m', dtype: 'q8', bytes: 123 };
    expect(memoryAlternative({ reason: 'insufficient_memory', alternative: named })).toEqual(named);
    const cap = capacity('wasm', 2);
    expect(memoryAlternative({ reason: 'insufficient_memory', model: 'org/m', device: 'wasm', alternative: null, capacity: cap })).toEqual(registryAlternative('org/m', 'wasm', cap));
    expect(memoryAlternative({ reason: 'load_error', alternative: named })).toBeNull();
  });
});
