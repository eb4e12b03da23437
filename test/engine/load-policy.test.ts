/**
 * The load policy (src/engine/load/load-policy.ts), each decision on its own: the device's
 * fallback from WebGPU to wasm and when it is not taken, a corrupt download, "none of the files",
 * a format named by hand whose files are missing, the memory check's format, a refused format
 * named with one that works. The loader and the device are fakes passed in as steps, so that each
 * branch runs without a GPU; the last test loads a real model with the default steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelHost, type ModelHost } from '../../e2e/support/model-host.ts';
import { JevError } from '../../src/contract/index.ts';
import { httpSource } from '../../src/engine/load/http-source.ts';
import { loadFailure, statusFailure } from '../../src/engine/load/load-failure.ts';
import { loadWithPolicy, type LoadPolicyDeps, type LoadSteps } from '../../src/engine/load/load-policy.ts';
import { DTYPE_FILES, unrunnable, type ModelSource, type ResolvedDevice } from '../../src/engine/load/load-model.ts';
import type { CheckedModelSource } from '../../src/engine/load/http-source.ts';
import { applyRuntimeConfig } from '../../src/engine/load/runtime-env.ts';
import { IntegrityCache } from '../../src/engine/load/storage/integrity-cache.ts';
import type { Device, Dtype, LanguageModel } from '../../src/engine/model/language-model.ts';
import type { LoadEvent, LoadOptions } from '../../src/protocol/engine-api.ts';
import { GENERATED, TINY } from '../support/models.ts';

const MODEL = 'org/tiny';
const BASE = `http://models.test/${MODEL}/resolve/main/`;
const GPU: ResolvedDevice = { device: 'webgpu', shaderF16: false, adapter: 'Fake GPU' };
const WASM: ResolvedDevice = { device: 'wasm', shaderF16: false, adapter: null };

const options = (o: Partial<LoadOptions> = {}): LoadOptions => ({ model: MODEL, host: 'http://models.test', device: 'auto', dtype: 'auto', ...o });

/** A source offering `offered` (its graphs and their data), as http-source.ts answers. */
function source(offered: Dtype[], extra: Partial<CheckedModelSource> = {}): ModelSource & Partial<CheckedModelSource> {
  const files = new Set(offered.map((d) => DTYPE_FILES[d]));
  return {
    base: BASE,
    check: async () => ({ model_type: 'llama' }),
    has: async (file) => files.has(file),
    missing: async (file) => (files.has(file) ? [] : [`onnx/${file}`]),
    unanswered: async () => null,
    ...extra,
  };
}

/** A model the fake loader hands out: only what the policy touches (`dispose`), and what it was loaded as. */
interface FakeModel {
  device: Device;
  dtype: Dtype;
  disposed: boolean;
  dispose(): Promise<void>;
}

/**
 * A loader that fails on each device with what `failures` says (or loads), recording each try;
 * `during` runs inside a try, as a download the integrity cache refuses would.
 */
function loader(failures: Partial<Record<Device, unknown>>, during?: (device: Device) => void) {
  const tries: { device: Device; dtype: Dtype }[] = [];
  const loaded: FakeModel[] = [];
  const loadLanguageModel: LoadSteps['loadLanguageModel'] = async (_model, device, dtype) => {
    tries.push({ device, dtype });
    during?.(device);
    if (failures[device] !== undefined) throw failures[device];
    const lm: FakeModel = {
      device,
      dtype,
      disposed: false,
      async dispose() {
        lm.disposed = true;
      },
    };
    loaded.push(lm);
    return lm as unknown as LanguageModel;
  };
  return { tries, loaded, loadLanguageModel };
}

async function run(o: LoadOptions, deps: Partial<LoadPolicyDeps> & { device: ResolvedDevice; loader: ReturnType<typeof loader> }) {
  const events: LoadEvent[] = [];
  const steps: Partial<LoadSteps> = { resolveDevice: async () => deps.device, loadLanguageModel: deps.loader.loadLanguageModel, ...deps.steps };
  const result = await loadWithPolicy(o, { source: source(['q4', 'fp32', 'q8']), isNode: false, onEvent: (e) => events.push(e), ...deps, steps }).then(
    (r) => ({ ok: r, error: null }),
    (e: unknown) => ({ ok: null, error: e as JevError }),
  );
  return { ...result, events };
}

/** A fault of the device: an error whose cause load-failure.ts cannot name (it may be the device's). */
const DEVICE_FAULT = new Error('WebGPU validation error: buffer too large');

describe('device fallback', () => {
  it('WebGPU preferred (auto): a fault of the device loads again on wasm, tells a fallback event, and the adapter is gone', async () => {
    const l = loader({ webgpu: DEVICE_FAULT });
    const { ok, error, events } = await run(options(), { device: GPU, loader: l });
    expect(error).toBe(null);
    // webgpu without shader-f16 prefers q4; wasm prefers q8 (dtype-preference.ts): each device chose its own format.
    expect(l.tries).toEqual([
      { device: 'webgpu', dtype: 'q4' },
      { device: 'wasm', dtype: 'q8' },
    ]);
    expect(events).toEqual([{ type: 'fallback', from: 'webgpu', to: 'wasm', reason: DEVICE_FAULT.message }]);
    expect(ok!.adapter).toBe(null);
    expect((ok!.lm as unknown as FakeModel).device).toBe('wasm');
    expect(ok!.storage).toBe(null);
  });

  it('WebGPU asked for by name: the fault is reported, nothing falls back', async () => {
    const l = loader({ webgpu: DEVICE_FAULT });
    const { error, events } = await run(options({ device: 'webgpu' }), { device: GPU, loader: l });
    expect(error).toBe(DEVICE_FAULT);
    expect(l.tries.map((t) => t.device)).toEqual(['webgpu']);
    expect(events).toEqual([]);
  });

  it('a fault of the files or their host would meet wasm the same: reported, nothing falls back', async () => {
    const hostError = statusFailure(`${BASE}onnx/model_q4.onnx`, 503, { model: MODEL, base: BASE });
    const l = loader({ webgpu: hostError });
    const { error, events } = await run(options(), { device: GPU, loader: l });
    expect(error).toBe(hostError);
    expect(error!.details).toMatchObject({ reason: 'host_error' });
    expect(l.tries.map((t) => t.device)).toEqual(['webgpu']);
    expect(events).toEqual([]);
  });

  it('on wasm already there is nothing to fall back to; a fault on the fallback itself is the one reported', async () => {
    const onWasm = loader({ wasm: DEVICE_FAULT });
    expect((await run(options(), { device: WASM, loader: onWasm })).error).toBe(DEVICE_FAULT);
    expect(onWasm.tries.map((t) => t.device)).toEqual(['wasm']);
    const wasmFault = new Error('wasm: out of bounds');
    const both = loader({ webgpu: DEVICE_FAULT, wasm: wasmFault });
    const { error, events } = await run(options(), { device: GPU, loader: both });
    expect(error).toBe(wasmFault);
    expect(both.tries.map((t) => t.device)).toEqual(['webgpu', 'wasm']);
    expect(events.map((e) => e.type)).toEqual(['fallback']);
  });
});

describe('a corrupt download', () => {
  const URL_ = `${BASE}onnx/model_q4.onnx`;
  const refuse = (cache: IntegrityCache) => () => cache.refused.push({ key: URL_, sha256: 'aa'.repeat(32), stated: 'bb'.repeat(32) });

  it('is the cause of the failed load, names the file, both hashes and the host, and does not fall back', async () => {
    const cache = new IntegrityCache();
    const l = loader({ webgpu: DEVICE_FAULT }, refuse(cache));
    const { error, events } = await run(options(), { device: GPU, loader: l, modelCache: cache });
    expect(error!.code).toBe('model_load_failed');
    expect(error!.details).toMatchObject({ reason: 'file_corrupt', url: URL_, host: 'http://models.test', model: MODEL });
    expect(error!.message).toContain(`its SHA-256 is ${'aa'.repeat(32)}, http://models.test states ${'bb'.repeat(32)}`);
    expect(l.tries.map((t) => t.device)).toEqual(['webgpu']);
    expect(events).toEqual([]);
  });

  it('fails a load that otherwise succeeded, and the model loaded meanwhile is disposed', async () => {
    const cache = new IntegrityCache();
    const l = loader({}, refuse(cache));
    const { error } = await run(options(), { device: WASM, loader: l, modelCache: cache });
    expect(error!.details).toMatchObject({ reason: 'file_corrupt', url: URL_ });
    expect(l.loaded).toHaveLength(1);
    expect(l.loaded[0]!.disposed).toBe(true);
  });

  it("a refusal of an earlier load is not this load's: it loads, and reports what it stored", async () => {
    const cache = new IntegrityCache();
    refuse(cache)();
    const l = loader({});
    const { ok, error } = await run(options(), { device: WASM, loader: l, modelCache: cache });
    expect(error).toBe(null);
    expect(l.loaded[0]!.disposed).toBe(false);
    // Nothing of this load was served unstored, resumed or found evicted.
    expect(ok!.storage).toMatchObject({ stored: true, unstored: [], neededBytes: 0, resumedBytes: 0, redownloaded: [], message: null });
  });
});

describe('the format', () => {
  it('none of the files: no_model_files, naming every file looked for and the host; nothing loads', async () => {
    const l = loader({});
    const { error } = await run(options(), { device: WASM, loader: l, source: source([]) });
    expect(error!.details).toMatchObject({ reason: 'no_model_files', model: MODEL, host: 'http://models.test' });
    for (const file of Object.values(DTYPE_FILES)) expect(error!.message).toContain(`onnx/${file}`);
    expect(error!.message).toContain(`at ${BASE}:`);
    expect(l.tries).toEqual([]);
  });

  it('none of the files where a host did not answer: that is the cause, not the model', async () => {
    const offline = loadFailure('The host http://models.test cannot be reached.', { reason: 'host_unreachable', host: 'http://models.test' });
    const { error } = await run(options(), { device: WASM, loader: loader({}), source: source([], { unanswered: async () => offline }) });
    expect(error).toBe(offline);
  });

  it('a format named by hand must have its files: file_missing names the file and what the model offers', async () => {
    const l = loader({});
    const { error } = await run(options({ dtype: 'fp16' }), { device: WASM, loader: l, source: source(['q8', 'q4']) });
    expect(error!.details).toMatchObject({ reason: 'file_missing', file: 'onnx/model_fp16.onnx', dtype: 'fp16', device: 'wasm', offered: ['q8', 'q4'] });
    expect(l.tries).toEqual([]);
  });

  it("a format the device cannot run is refused before the load, naming one that works", async () => {
    const { error } = await run(options({ dtype: 'fp16', device: 'webgpu' }), { device: GPU, loader: loader({}), source: source(['fp16', 'q4']) });
    expect(error!.details).toMatchObject({ reason: 'unsupported_format', dtype: 'fp16', device: 'webgpu', instead: 'q4' });
  });

  it('loads the format the memory check settled on', async () => {
    const l = loader({});
    const checked: Dtype[] = [];
    const checkMemory: LoadSteps['checkMemory'] = async (check) => (checked.push(check.dtype), 'fp32');
    await run(options(), { device: WASM, loader: l, steps: { checkMemory } });
    expect(checked).toEqual(['q8']);
    expect(l.tries).toEqual([{ device: 'wasm', dtype: 'fp32' }]);
  });

  it('a format refused at load (an operator the backend lacks) is named with one that works, not the one refused', async () => {
    const refusal = unrunnable('q8', 'wasm', 'the backend lacks MatMulInteger(10)', null, { operator: 'MatMulInteger(10)' });
    const l = loader({ wasm: refusal });
    const { error } = await run(options({ device: 'wasm' }), { device: WASM, loader: l, source: source(['q8', 'fp32']) });
    expect(error!.details).toMatchObject({ reason: 'unsupported_format', dtype: 'q8', instead: 'fp32', operator: 'MatMulInteger(10)' });
    expect(error!.message).toContain('use dtype fp32 instead');
    // Where the model offers nothing else, the refusal stands as it was.
    const alone = await run(options({ device: 'wasm' }), { device: WASM, loader: loader({ wasm: refusal }), source: source(['q8']) });
    expect(alone.error).toBe(refusal);
  });

  it('a host that cannot be reached fails at the check, before any device is asked for', async () => {
    const unreachable = loadFailure('The host cannot be reached.', { reason: 'host_unreachable' });
    let asked = false;
    const l = loader({});
    const { error } = await run(options(), {
      device: GPU,
      loader: l,
      source: source(['q8'], { check: async () => Promise.reject(unreachable) }),
      steps: { resolveDevice: async () => ((asked = true), GPU) },
    });
    expect(error).toBe(unreachable);
    expect(asked).toBe(false);
    expect(l.tries).toEqual([]);
  });
});

describe('with the default steps (onnxruntime-node)', () => {
  let host: ModelHost;
  beforeAll(async () => {
    host = await startModelHost([GENERATED]);
  });
  afterAll(() => host.close());

  it('loads a real model on the CPU in the format the CPU prefers, and reports no adapter', async () => {
    const o: LoadOptions = { model: TINY, host: host.url, device: 'auto', dtype: 'auto' };
    applyRuntimeConfig({}, o.host);
    const events: LoadEvent[] = [];
    const { lm, adapter, storage } = await loadWithPolicy(o, { source: httpSource(o, { cacheName: null }), isNode: true, onEvent: (e) => events.push(e) });
    try {
      expect([lm.id, lm.device, lm.dtype]).toEqual([TINY, 'cpu', 'q8']);
      expect(adapter).toBe(null);
      expect(storage).toBe(null);
      expect(events.some((e) => e.type === 'fallback')).toBe(false);
    } finally {
      await lm.dispose();
    }
  });
});
