import { useEffect, useState } from 'preact/hooks';
import type { DeviceChoice, DtypeChoice } from '../protocol/engine-api.ts';
import { CacheStatus } from './cache-status.tsx';
import { DeviceInfo } from './device-info.tsx';
import type { EnginePhase, EngineState } from './engine-state.ts';
import { formatBytes, formatMs } from './format.ts';
import type { LoadProgress } from './load-progress.ts';
import { ModelFacts } from './model-facts.tsx';
import { dtypesOf, findRegistryModel, MODEL_REGISTRY } from './model-registry.ts';
import { ProgressList } from './progress-list.tsx';
import type { WebGpuSupport } from './webgpu-probe.ts';

interface ModelPanelProps {
  engine: EngineState;
  progress: LoadProgress;
  webgpu: WebGpuSupport | null;
}

function StatusLine({ state }: { state: EnginePhase }) {
  const { target } = state;
  if (state.phase === 'failed') {
    return (
      <p class="status failed" role="alert" data-testid="engine-status" data-state="failed" data-reason={state.reason ?? undefined}>
        Loading {target.model} failed: {state.error}
      </p>
    );
  }
  if (state.phase === 'loading') {
    return (
      <p class="status loading" role="status" data-testid="engine-status" data-state="loading">
        <span class="spinner" aria-hidden="true" /> Loading {target.model}…
      </p>
    );
  }
  const s = state.status;
  return (
    <p class="status ready" role="status" data-testid="engine-status" data-state="ready">
      <span class="dot" aria-hidden="true" /> Ready: <strong>{s.model}</strong> · {s.dtype} on {s.device}
      {s.contextLength ? ` · ${s.contextLength.toLocaleString('en')}-token context` : ''}
      {s.device === 'wasm' && s.threads ? ` · ${s.threads} thread${s.threads === 1 ? '' : 's'}` : ''} · loaded in {formatMs(state.loadMs)}
    </p>
  );
}

/** Which model runs, on which device and dtype; its download, its cache, and the GPU. */
export function ModelPanel({ engine, progress, webgpu }: ModelPanelProps) {
  const state = engine.current.value;
  const [model, setModel] = useState(state.target.model);
  const [device, setDevice] = useState<DeviceChoice>(state.target.device);
  const [dtype, setDtype] = useState<DtypeChoice>(state.target.dtype);
  const loadKey = `${state.phase}:${state.target.model}:${state.target.device}:${state.target.dtype}`;

  // After a load the selection shows what is loaded (the page's address says the same).
  useEffect(() => {
    setModel(state.target.model);
    setDevice(state.target.device);
    setDtype(state.target.dtype);
  }, [loadKey]);

  const dtypes = dtypesOf(model);
  const entry = findRegistryModel(model);
  const loading = state.phase === 'loading';
  const same = state.phase === 'ready' && model === state.target.model && device === state.target.device && dtype === state.target.dtype;
  const gpuMissing = webgpu !== null && webgpu.kind !== 'available';

  const chooseModel = (id: string) => {
    setModel(id);
    if (dtype !== 'auto' && !dtypesOf(id).includes(dtype)) setDtype('auto');
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void engine.load({ model, device, dtype });
  };

  return (
    <section class="panel model-panel" aria-labelledby="model-h">
      <h2 id="model-h">Model</h2>
      <StatusLine state={state} />
      <form class="stack" onSubmit={submit}>
        <div class="field">
          <label for="model-select">Model</label>
          <select id="model-select" value={model} onChange={(e) => chooseModel(e.currentTarget.value)}>
            {[...new Set([engine.initial.model, state.target.model])]
              .filter((id) => !findRegistryModel(id))
              .map((id) => (
                <option value={id} key={id}>
                  {id}
                  {id === engine.initial.model ? ' (from the address)' : ''}
                </option>
              ))}
            {MODEL_REGISTRY.map((m) => (
              <option value={m.id} key={m.id}>
                {m.label} · {m.parameters}
              </option>
            ))}
          </select>
        </div>
        <ModelFacts entry={entry} host={state.target.host} gpuMissing={gpuMissing} />
        <div class="field-row">
          <div class="field">
            <label for="device-select">Device</label>
            <select id="device-select" value={device} onChange={(e) => setDevice(e.currentTarget.value as DeviceChoice)}>
              <option value="auto">Auto</option>
              <option value="webgpu" disabled={gpuMissing}>
                WebGPU{gpuMissing ? ' (not available)' : ''}
              </option>
              <option value="wasm">wasm (CPU)</option>
            </select>
          </div>
          <div class="field">
            <label for="dtype-select">Precision (dtype)</label>
            <select id="dtype-select" value={dtype} onChange={(e) => setDtype(e.currentTarget.value as DtypeChoice)}>
              <option value="auto">Auto</option>
              {dtypes.map((d) => (
                <option value={d} key={d}>
                  {d}
                  {entry?.files[d] ? ` · ${formatBytes(entry.files[d])}` : ''}
                </option>
              ))}
            </select>
          </div>
        </div>
        <p class="hint">Auto: WebGPU where this browser has it, else wasm; and the best precision the model and device allow.</p>
        <button type="submit" class="button primary" disabled={loading || same}>
          {loading ? 'Loading…' : same ? 'Loaded' : 'Load model'}
        </button>
      </form>
      <ProgressList progress={progress} active={loading} failed={state.phase === 'failed'} />
      <h3>Stored in this browser</h3>
      <CacheStatus host={state.target.host} model={model} refreshKey={loadKey} loaded={state.phase === 'ready' && model === state.target.model} />
      <h3>Graphics</h3>
      <DeviceInfo support={webgpu} status={state.phase === 'ready' ? state.status : null} requested={state.target.device} />
    </section>
  );
}
