/**
 * RuntimeConfig.ortBuild reaches onnxruntime's wasmPaths once the load knows its device
 * (src/engine/load/runtime-env.ts `pinRuntimeBuild`), and the first build pinned stays: onnxruntime-web
 * initialises its module once per worker; so do its threads (RuntimeConfig.threads, LoadOptions.threads).
 * A worker on the wasm-only build asked for WebGPU says so with `engine_unavailable`, reason
 * `runtime_build` (its supervisor then loads in a fresh worker: test/reliability/supervisor.test.ts).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { RUNTIME_BUILD_REASON } from '../../src/protocol/engine-api.ts';
import { ORT_BUILDS, webGpuOrtBuild } from '../../src/engine/runtime/ort-build.ts';

type Env = typeof import('../../src/engine/load/runtime-env.ts');
async function fresh(): Promise<{ mod: Env; wasm: { wasmPaths?: unknown; numThreads?: number } }> {
  vi.resetModules();
  const mod = await import('../../src/engine/load/runtime-env.ts');
  const { env } = await import('@huggingface/transformers');
  const wasm = env.backends.onnx.wasm as { wasmPaths?: unknown; numThreads?: number };
  wasm.wasmPaths = undefined;
  return { mod, wasm };
}

describe('applyRuntimeConfig and the onnxruntime-web build', () => {
  beforeEach(() => vi.resetModules());

  it('points wasmPaths at the forced build, under ortBase, once the device is known', async () => {
    const { mod, wasm } = await fresh();
    expect(mod.configuredOrtBuild()).toBeNull();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort', ortBuild: 'asyncify', threads: 1 }, undefined);
    expect(wasm.wasmPaths).toBeUndefined();
    expect(mod.pinRuntimeBuild('wasm')).toBe('asyncify');
    expect(wasm.wasmPaths).toEqual({ mjs: `http://a.test/ort/${ORT_BUILDS.asyncify.mjs}`, wasm: `http://a.test/ort/${ORT_BUILDS.asyncify.wasm}` });
    expect(mod.configuredOrtBuild()).toBe('asyncify');
  });

  it('keeps the first build for later loads in the same worker', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/', ortBuild: 'asyncify' }, undefined);
    mod.pinRuntimeBuild('wasm');
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/', ortBuild: 'jspi' }, undefined);
    expect(mod.pinRuntimeBuild('webgpu')).toBe('asyncify');
    expect((wasm.wasmPaths as { mjs: string }).mjs).toBe(`http://a.test/ort/${ORT_BUILDS.asyncify.mjs}`);
    expect(mod.configuredOrtBuild()).toBe('asyncify');
  });

  it('a wasm load runs the wasm-only build; the same worker asked for WebGPU later refuses with engine_unavailable (runtime_build), its build unchanged', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/' }, undefined);
    expect(mod.pinRuntimeBuild('wasm')).toBe('cpu');
    expect(wasm.wasmPaths).toEqual({ mjs: `http://a.test/ort/${ORT_BUILDS.cpu.mjs}`, wasm: `http://a.test/ort/${ORT_BUILDS.cpu.wasm}` });
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/' }, undefined);
    let refusal: unknown = null;
    try {
      mod.pinRuntimeBuild('webgpu');
    } catch (e) {
      refusal = e;
    }
    expect((refusal as Error | null)?.name).toBe('JevError'); // the module is imported afresh: its class is not this file's
    expect(refusal).toMatchObject({ code: 'engine_unavailable', param: 'device', details: { reason: RUNTIME_BUILD_REASON, build: 'cpu', device: 'webgpu' } });
    expect((refusal as Error).message).toMatch(/wasm-only build \(cpu\).*cannot run webgpu/);
    expect(mod.configuredOrtBuild()).toBe('cpu');
    // wasm again is served as before.
    expect(mod.pinRuntimeBuild('wasm')).toBe('cpu');
  });

  it('a WebGPU load runs the WebGPU build, which a later wasm load in the same worker keeps', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/' }, undefined);
    expect(mod.pinRuntimeBuild('webgpu')).toBe(webGpuOrtBuild());
    expect(mod.pinRuntimeBuild('wasm')).toBe(webGpuOrtBuild());
    expect((wasm.wasmPaths as { mjs: string }).mjs).toBe(`http://a.test/ort/${ORT_BUILDS[webGpuOrtBuild()].mjs}`);
  });

  it('in a browser (ortBase), the threads of the first load stay for the worker; configuredThreads says so', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/', threads: 1 }, undefined);
    expect([wasm.numThreads, mod.configuredThreads()]).toEqual([1, 1]);
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/', threads: 3 }, undefined);
    expect([wasm.numThreads, mod.configuredThreads()]).toEqual([1, 1]);
  });

  it('without ortBase (Node), each load applies the threads it asks', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ threads: 1, localModelPath: '/m' }, undefined);
    const quiet = { extra: { session: { intra_op: { allow_spinning: '0' } } } };
    expect([wasm.numThreads, mod.nodeSessionOptions()]).toEqual([1, { intraOpNumThreads: 1, ...quiet }]);
    mod.applyRuntimeConfig({ threads: 3, localModelPath: '/m' }, undefined);
    expect([wasm.numThreads, mod.nodeSessionOptions()]).toEqual([3, { intraOpNumThreads: 3, ...quiet }]);
  });

  it('without a choice, a wasm load runs the wasm-only build', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/' }, undefined);
    mod.pinRuntimeBuild('wasm');
    expect((wasm.wasmPaths as { mjs: string }).mjs).toBe(`http://a.test/ort/${ORT_BUILDS.cpu.mjs}`);
    expect(mod.configuredOrtBuild()).toBe('cpu');
  });

  it('without ortBase (Node), sets no path and reports no build', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBuild: 'jspi', localModelPath: '/m' }, undefined);
    expect(mod.pinRuntimeBuild('wasm')).toBeNull();
    expect(wasm.wasmPaths).toBeUndefined();
    expect(mod.configuredOrtBuild()).toBeNull();
  });

  it('in a browser, reads a model folder as a host on this origin: a size check is a Range request, not a whole download left unread', async () => {
    const { mod } = await fresh();
    const { env } = await import('@huggingface/transformers');
    const useFS = env.useFS;
    const location = Object.getOwnPropertyDescriptor(globalThis, 'location');
    try {
      env.useFS = false;
      Object.defineProperty(globalThis, 'location', { value: new URL('http://a.test/page/index.html'), configurable: true });
      mod.applyRuntimeConfig({ localModelPath: '/models' }, 'https://hub.test');
      expect([env.allowRemoteModels, env.allowLocalModels]).toEqual([true, false]);
      expect(`${env.remoteHost}${env.remotePathTemplate.replace('{model}', 'm')}`).toBe('http://a.test/models/m/');
      env.useFS = true;
      mod.applyRuntimeConfig({ localModelPath: '/models' }, undefined);
      expect([env.allowRemoteModels, env.allowLocalModels, env.localModelPath]).toEqual([false, true, '/models/']);
    } finally {
      env.useFS = useFS;
      if (location) Object.defineProperty(globalThis, 'location', location);
      else delete (globalThis as { location?: unknown }).location;
    }
  });
});
