/**
 * RuntimeConfig.ortBuild reaches onnxruntime's wasmPaths (src/engine/load/runtime-env.ts), and the
 * first build applied stays: onnxruntime-web initialises its module once per worker; so do its
 * threads (RuntimeConfig.threads, LoadOptions.threads).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ORT_BUILDS, ortBuild } from '../../src/engine/runtime/ort-build.ts';

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

  it('points wasmPaths at the forced build, under ortBase', async () => {
    const { mod, wasm } = await fresh();
    expect(mod.configuredOrtBuild()).toBeNull();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort', ortBuild: 'asyncify', threads: 1 }, undefined);
    expect(wasm.wasmPaths).toEqual({ mjs: `http://a.test/ort/${ORT_BUILDS.asyncify.mjs}`, wasm: `http://a.test/ort/${ORT_BUILDS.asyncify.wasm}` });
    expect(mod.configuredOrtBuild()).toBe('asyncify');
  });

  it('keeps the first build for later loads in the same worker', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/', ortBuild: 'asyncify' }, undefined);
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/', ortBuild: 'jspi' }, undefined);
    expect((wasm.wasmPaths as { mjs: string }).mjs).toBe(`http://a.test/ort/${ORT_BUILDS.asyncify.mjs}`);
    expect(mod.configuredOrtBuild()).toBe('asyncify');
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

  it('without a choice, loads the default build of this JavaScript engine', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBase: 'http://a.test/ort/' }, undefined);
    expect((wasm.wasmPaths as { mjs: string }).mjs).toBe(`http://a.test/ort/${ORT_BUILDS[ortBuild()].mjs}`);
    expect(mod.configuredOrtBuild()).toBe(ortBuild());
  });

  it('without ortBase (Node), sets no path and reports no build', async () => {
    const { mod, wasm } = await fresh();
    mod.applyRuntimeConfig({ ortBuild: 'jspi', localModelPath: '/m' }, undefined);
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
