import { formatBytes } from '../shared/format.ts';
import { ALL_DTYPES, dataChunksOf, type RegistryModel } from './model-registry.ts';

const NEED_TEXT: Record<RegistryModel['webgpu'], string> = {
  optional: 'Runs on WebGPU or wasm',
  recommended: 'WebGPU recommended',
  required: 'Needs WebGPU',
};

/** What the chosen model is: its size per dtype and what it needs. */
export function ModelFacts({ entry, host, gpuMissing }: { entry: RegistryModel | undefined; host: string; gpuMissing: boolean }) {
  if (!entry) {
    return (
      <p class="muted small-text" data-testid="model-facts">
        Not one of the recommended models; its files are read from <span class="file-name">{host}</span>. To open any other, add{' '}
        <code>?model=owner/name</code> to the address.
      </p>
    );
  }
  const sizes = ALL_DTYPES.filter((d) => entry.files[d] !== undefined).map((d) => {
    const chunks = dataChunksOf(entry, d);
    const data = chunks === 0 ? '' : ` (graph + ${chunks === 1 ? 'a data file' : `${chunks} data files`})`;
    return `${d} ${formatBytes(entry.files[d]!)}${data}`;
  });
  return (
    <div class="facts-box" data-testid="model-facts">
      <p class="small-text">
        <span class={`badge ${entry.webgpu}`}>{NEED_TEXT[entry.webgpu]}</span> {entry.note}
      </p>
      <p class="muted small-text">Download: {sizes.join(' · ')}</p>
      {entry.webgpu === 'required' && gpuMissing && (
        <p class="field-error small-text">This browser has no WebGPU, so this model cannot run here. Pick a smaller one.</p>
      )}
    </div>
  );
}
