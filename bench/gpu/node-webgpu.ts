/**
 * Node as the engine's browser, for bench/gpu/run.ts. Imported before anything that imports
 * transformers.js, because transformers.js reads its environment when it is evaluated:
 *
 * - `navigator.gpu` is Dawn's, from its Node bindings (the `webgpu` package's `dawn.node`, the
 *   WebGPU implementation Chromium itself is built on), with the WebGPU globals
 *   (`GPUBufferUsage`, …) that onnxruntime-web's WebGPU backend reads;
 * - transformers.js is told it is not in Node (`process.release.name`), so that it runs
 *   onnxruntime-web, the runtime the product ships, and reads models over HTTP through the
 *   engine's fetch, as in the browser, rather than onnxruntime-node from the filesystem.
 *
 * `JEV_DAWN_NODE` names the `dawn.node` to load (the packed copy on a machine without
 * node_modules); by default it is the `webgpu` package's build for this platform.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';

export interface GpuAdapterInfo {
  vendor: string;
  architecture: string;
  description: string;
  shaderF16: boolean;
}

export interface NodeWebGpu {
  /** Where dawn.node was loaded from, or null when it could not be. */
  dawn: string | null;
  /** Why there is no `navigator.gpu` (dawn.node missing or failing to load), else null. */
  error: string | null;
}

const require = createRequire(import.meta.url);

function dawnPath(): string | null {
  if (process.env['JEV_DAWN_NODE']) return process.env['JEV_DAWN_NODE'];
  try {
    const root = dirname(require.resolve('webgpu/package.json'));
    const arch = process.platform === 'darwin' ? 'universal' : process.arch;
    const path = join(root, 'dist', `${process.platform}-${arch}`, 'dawn.node');
    return existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

function install(): NodeWebGpu {
  Object.defineProperty(process, 'release', { value: { ...process.release, name: 'jev-gpu-bench' }, configurable: true });
  // Dawn's Vulkan backend looks for this directory; a bare machine has none.
  process.env['XDG_RUNTIME_DIR'] ??= '/tmp';
  // JEV_ORT_BUILD=asyncify: onnxruntime-web's asyncify build where JSPI exists too (ort-build.ts
  // picks JSPI wherever WebAssembly.Suspending exists), to measure one against the other.
  if (process.env['JEV_ORT_BUILD'] === 'asyncify') delete (WebAssembly as { Suspending?: unknown }).Suspending;
  // Node 21 on has a `navigator`; Node 20 none.
  if (!globalThis.navigator) Object.defineProperty(globalThis, 'navigator', { value: { hardwareConcurrency: availableParallelism() }, configurable: true });
  const path = dawnPath();
  if (!path) return { dawn: null, error: 'dawn.node not found: install the `webgpu` package or set JEV_DAWN_NODE' };
  try {
    const dawn = require(path) as { create(flags: string[]): unknown; globals: Record<string, unknown> };
    Object.assign(globalThis, dawn.globals);
    const flags = (process.env['JEV_DAWN_FLAGS'] ?? '').split(/\s+/).filter(Boolean);
    Object.defineProperty(globalThis.navigator, 'gpu', { value: dawn.create(flags), configurable: true });
    return { dawn: path, error: null };
  } catch (e) {
    return { dawn: path, error: `dawn.node did not load: ${(e as Error).message}` };
  }
}

export const nodeWebGpu: NodeWebGpu = install();

/** The adapter WebGPU offers here, or null where there is none. */
export async function gpuAdapter(): Promise<GpuAdapterInfo | null> {
  const gpu = (globalThis.navigator as unknown as { gpu?: { requestAdapter(o?: object): Promise<unknown> } }).gpu;
  if (!gpu) return null;
  const a = (await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null)) as {
    info?: { vendor?: string; architecture?: string; description?: string };
    features: Set<string>;
  } | null;
  if (!a) return null;
  return {
    vendor: a.info?.vendor ?? '',
    architecture: a.info?.architecture ?? '',
    description: a.info?.description ?? '',
    shaderF16: a.features.has('shader-f16'),
  };
}
