import { env } from '@huggingface/transformers';
import type { IntegrityCache } from './integrity-cache.ts';

/** Where the engine finds its files. One typed object, applied to transformers.js' `env` in one place. */
export interface RuntimeConfig {
  /** Base URL of the self-hosted onnxruntime-web `.mjs`/`.wasm` files (browser); never a CDN. */
  ortBase?: string | undefined;
  /** A local folder of models in the hub layout (Node and tests), used instead of a host. */
  localModelPath?: string | undefined;
  /** wasm threads; defaults to navigator.hardwareConcurrency where the page is cross-origin isolated. */
  threads?: number | undefined;
  /** The model-file cache (browser): the Cache API with size and hash checks. */
  modelCache?: IntegrityCache | undefined;
}

export const ORT_FILES = {
  mjs: 'ort-wasm-simd-threaded.asyncify.mjs',
  wasm: 'ort-wasm-simd-threaded.asyncify.wasm',
} as const;

export function applyRuntimeConfig(config: RuntimeConfig, host: string | undefined): void {
  env.allowRemoteModels = !config.localModelPath;
  env.allowLocalModels = !!config.localModelPath;
  if (config.localModelPath) env.localModelPath = config.localModelPath.endsWith('/') ? config.localModelPath : `${config.localModelPath}/`;
  if (host) {
    env.remoteHost = host.endsWith('/') ? host : `${host}/`;
    env.remotePathTemplate = '{model}/resolve/{revision}/';
  }
  if (config.modelCache) {
    env.useCustomCache = true;
    env.customCache = config.modelCache as unknown as typeof env.customCache;
  }
  const wasm = env.backends.onnx?.wasm;
  if (wasm) {
    if (config.ortBase) {
      // Import onnxruntime's factory from its own URL rather than a blob: copy, so that a strict
      // Content-Security-Policy (script-src 'self') holds; offline, the service worker serves it.
      env.useWasmCache = false;
      const base = config.ortBase.endsWith('/') ? config.ortBase : `${config.ortBase}/`;
      wasm.wasmPaths = { mjs: `${base}${ORT_FILES.mjs}`, wasm: `${base}${ORT_FILES.wasm}` };
    }
    wasm.numThreads = config.threads ?? defaultThreads();
  }
}

export function defaultThreads(): number {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  const cores = (globalThis.navigator as Navigator | undefined)?.hardwareConcurrency ?? 1;
  return isolated ? Math.max(1, cores) : 1;
}

export function configuredThreads(): number {
  return env.backends.onnx?.wasm?.numThreads ?? 1;
}
