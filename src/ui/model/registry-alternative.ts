import type { DeviceCapacity } from '../../engine/load/memory/device-capacity.ts';
import { estimateLoad } from '../../engine/load/memory/memory-estimate.ts';
import { shortfall } from '../../engine/load/memory/memory-fit.ts';
import { ALL_DTYPES, MODEL_REGISTRY, type Dtype } from './model-registry.ts';

/** A model and dtype to load instead of one refused for memory. */
export interface MemoryAlternative {
  model: string;
  dtype: Dtype;
  bytes: number;
}

/** The registry's dtypes a device runs: f16 formats need WebGPU's shader-f16 there. */
function runs(device: string, capacity: DeviceCapacity, dtype: Dtype): boolean {
  return device !== 'webgpu' || capacity.shaderF16 || (dtype !== 'fp16' && dtype !== 'q4f16');
}

/**
 * The model to offer when a load was refused for memory (`details.reason: "insufficient_memory"`)
 * and the model itself has no format that fits: the registry's largest download that the same
 * estimate (memory-estimate.ts) lets through on the same device (`details.capacity`), other than
 * the refused model, or null.
 */
export function registryAlternative(refused: string, device: string, capacity: DeviceCapacity): MemoryAlternative | null {
  if (device !== 'wasm' && device !== 'webgpu') return null;
  let best: MemoryAlternative | null = null;
  for (const entry of MODEL_REGISTRY) {
    if (entry.id === refused) continue;
    for (const dtype of ALL_DTYPES) {
      const bytes = entry.files[dtype];
      if (bytes === undefined || !runs(device, capacity, dtype)) continue;
      if (shortfall(estimateLoad(device, dtype, bytes), capacity)) continue;
      if (!best || bytes > best.bytes) best = { model: entry.id, dtype, bytes };
    }
  }
  return best;
}

/** The alternative a refusal's details name (the engine's: a dtype of the same model), else the registry's, else null. */
export function memoryAlternative(details: Record<string, unknown> | null): MemoryAlternative | null {
  if (!details || details['reason'] !== 'insufficient_memory') return null;
  const named = details['alternative'] as Partial<MemoryAlternative> | null | undefined;
  if (named && typeof named.model === 'string' && typeof named.dtype === 'string' && typeof named.bytes === 'number') return named as MemoryAlternative;
  const capacity = details['capacity'] as DeviceCapacity | undefined;
  const device = details['device'];
  return capacity && typeof device === 'string' && typeof details['model'] === 'string' ? registryAlternative(details['model'], device, capacity) : null;
}
