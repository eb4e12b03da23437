import { formatBytes } from '../shared/format.ts';
import { findRegistryModel, type Dtype } from './model-registry.ts';
import type { MemoryAlternative } from './registry-alternative.ts';

/** Words for the limit a refused load would have passed (memory-fit.ts). */
const LIMITS: Record<string, string> = {
  gpu_buffer: 'as one WebGPU buffer',
  wasm_heap: "in wasm's 4 GiB",
  device_memory: 'of device memory',
};

/**
 * Shown when a load was refused because it will not fit (`details.reason: "insufficient_memory"`):
 * what it needed and what the device offers, and a model and dtype that fit, in one click.
 */
export function MemoryOffer({ details, alternative, onLoad }: { details: Record<string, unknown>; alternative: MemoryAlternative; onLoad: (model: string, dtype: Dtype) => void }) {
  const needed = details['needed'];
  const available = details['available'];
  const limit = typeof details['limit'] === 'string' ? (LIMITS[details['limit']] ?? '') : '';
  const same = alternative.model === details['model'];
  const name = same ? alternative.dtype : `${findRegistryModel(alternative.model)?.label ?? alternative.model} (${alternative.dtype})`;
  return (
    <div class="facts-box bundled-offer" data-testid="memory-offer" data-model={alternative.model} data-dtype={alternative.dtype}>
      <p class="small-text">
        {typeof needed === 'number' && typeof available === 'number' ? (
          <>
            It needs about <strong>{formatBytes(needed)}</strong> {limit}; this device offers {formatBytes(available)}. Nothing was downloaded.{' '}
          </>
        ) : null}
        {same ? `The same model as ${alternative.dtype} fits` : `${name} fits`} ({formatBytes(alternative.bytes)} to download).
      </p>
      <button type="button" class="button" onClick={() => onLoad(alternative.model, alternative.dtype)}>
        Load {name} instead
      </button>
    </div>
  );
}
