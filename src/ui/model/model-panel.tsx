import { useEffect, useState } from 'preact/hooks';
import { DEFAULT_HOST } from '../../facade/defaults.ts';
import type { JevClient } from '../../facade/jev-client.ts';
import type { DeviceChoice, DtypeChoice } from '../../protocol/engine-api.ts';
import { formatBytes, formatMs } from '../shared/format.ts';
import type { EnginePhase, EngineState, LoadTarget } from '../state/engine-state.ts';
import type { LoadProgress } from '../state/load-progress.ts';
import { BUNDLED_CHOICE, BUNDLED_MODEL, bundledHost, isBundled } from './bundled-model.ts';
import { BundledOffer } from './bundled-offer.tsx';
import { CacheStatus } from './cache-status.tsx';
import { DeviceInfo } from './device-info.tsx';
import { MemoryFacts } from './memory-facts.tsx';
import { MemoryOffer } from './memory-offer.tsx';
import { LoadFacts } from './load-facts.tsx';
import { ModelFacts } from './model-facts.tsx';
import { dtypesOf, findRegistryModel, MODEL_REGISTRY, type RegistryModel } from './model-registry.ts';
import { ProgressList } from './progress-list.tsx';
import { memoryAlternative } from './registry-alternative.ts';
import { SharingFacts } from './sharing-facts.tsx';
import { StorageFacts } from './storage-facts.tsx';
import type { WebGpuSupport } from './webgpu-probe.ts';

interface ModelPanelProps {
  client: JevClient;
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

/** The select's value for a load target: the bundled model has its own, since its id alone may name a copy elsewhere. */
function choiceOf(target: LoadTarget): string {
  return isBundled(target, location.href) ? BUNDLED_CHOICE : target.model;
}

/** The registry's entry for a choice (the bundled model's own for it). */
function entryOf(choice: string): RegistryModel | undefined {
  return choice === BUNDLED_CHOICE ? BUNDLED_MODEL : findRegistryModel(choice);
}

/**
 * Where a choice loads from: the app's own origin for the bundled model; leaving it, the host the
 * address named (or the default, where the address named the bundled one); else the same host.
 */
function hostFor(choice: string, engine: EngineState): string | undefined {
  const here = location.href;
  if (choice === BUNDLED_CHOICE) return bundledHost(here);
  if (engine.current.value.target.host !== bundledHost(here)) return undefined;
  return engine.initial.host === bundledHost(here) ? DEFAULT_HOST : engine.initial.host;
}

/** Which model runs, on which device and dtype; its download, its cache, its memory, and the GPU. */
export function ModelPanel({ client, engine, progress, webgpu }: ModelPanelProps) {
  const state = engine.current.value;
  const [model, setModel] = useState(choiceOf(state.target));
  const [device, setDevice] = useState<DeviceChoice>(state.target.device);
  const [dtype, setDtype] = useState<DtypeChoice>(state.target.dtype);
  const loadKey = `${state.phase}:${state.target.model}:${state.target.device}:${state.target.dtype}`;

  // After a load the selection shows what is loaded (the page's address says the same).
  useEffect(() => {
    setModel(choiceOf(state.target));
    setDevice(state.target.device);
    setDtype(state.target.dtype);
  }, [loadKey]);

  const entry = entryOf(model);
  const dtypes = model === BUNDLED_CHOICE ? dtypesOf(BUNDLED_MODEL.id, BUNDLED_MODEL) : dtypesOf(model);
  const loading = state.phase === 'loading';
  const same = state.phase === 'ready' && model === choiceOf(state.target) && device === state.target.device && dtype === state.target.dtype;
  const gpuMissing = webgpu !== null && webgpu.kind !== 'available';

  const chooseModel = (id: string) => {
    setModel(id);
    if (dtype !== 'auto' && !dtypesOf(id, entryOf(id)).includes(dtype)) setDtype('auto');
  };
  const loadChoice = (choice: string, on: DeviceChoice, as: DtypeChoice) => {
    const host = hostFor(choice, engine);
    void engine.load({ model: choice === BUNDLED_CHOICE ? BUNDLED_MODEL.id : choice, device: on, dtype: as, ...(host ? { host } : {}) });
  };
  const submit = (e: Event) => {
    e.preventDefault();
    loadChoice(model, device, dtype);
  };

  return (
    <section class="panel model-panel" aria-labelledby="model-h">
      <h2 id="model-h">Model</h2>
      <StatusLine state={state} />
      {state.phase === 'failed' && state.details && memoryAlternative(state.details) && (
        <MemoryOffer details={state.details} alternative={memoryAlternative(state.details)!} onLoad={(id, as) => loadChoice(id, state.target.device, as)} />
      )}
      {state.phase === 'failed' && !isBundled(state.target, location.href) && (
        <BundledOffer host={state.target.host} reason={state.reason} onLoad={() => loadChoice(BUNDLED_CHOICE, state.target.device, 'auto')} />
      )}
      <form class="stack" onSubmit={submit}>
        <div class="field">
          <label for="model-select">Model</label>
          <select id="model-select" value={model} onChange={(e) => chooseModel(e.currentTarget.value)}>
            <option value={BUNDLED_CHOICE}>
              {BUNDLED_MODEL.label} · {BUNDLED_MODEL.parameters} · bundled, no download
            </option>
            {[...new Set([engine.initial, state.target].filter((t) => !isBundled(t, location.href)).map((t) => t.model))]
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
      <StorageFacts progress={progress} status={state.phase === 'ready' ? state.status : null} host={state.target.host} />
      {state.phase === 'ready' && (
        <>
          <h3>Last load</h3>
          <LoadFacts lastLoad={state.status.lastLoad} />
          <h3>Memory</h3>
          <MemoryFacts client={client} refreshKey={loadKey} />
          <h3>Tabs</h3>
          <SharingFacts client={client} refreshKey={loadKey} />
        </>
      )}
      <CacheStatus host={state.target.host} model={entry === BUNDLED_MODEL ? BUNDLED_MODEL.id : model} refreshKey={loadKey} loaded={state.phase === 'ready' && model === state.target.model} />
      <h3>Graphics</h3>
      <DeviceInfo support={webgpu} status={state.phase === 'ready' ? state.status : null} requested={state.target.device} />
    </section>
  );
}
