import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { env } from '@huggingface/transformers';
import { JevError } from '../contract/index.ts';
import { Engine, type EngineHost } from '../engine/engine.ts';
import { externalDataFiles } from '../engine/load/external-data.ts';
import { EngineSupervisor } from '../facade/engine-supervisor.ts';
import { supervisedBinding } from '../facade/supervised-binding.ts';
import type { EngineBinding } from '../facade/engine-client.ts';
import type { HangWatchdogOptions } from '../facade/hang-watchdog.ts';
import { installErrorTransfer } from '../protocol/comlink-errors.ts';
import type { ServeDevice } from './cli-args.ts';
import { engineThread, engineThreadEntry, type EngineThreadData } from './engine-thread.ts';
import { folderHasModel } from './model-location.ts';
import { requireCudaProvider } from './cuda-provider.ts';

/** The onnxruntime-node the engine is tested on: package.json's peer dependency (and devDependency), pinned. */
export const ORT_NODE_VERSION = '1.30.0';

export interface EmbeddedEngineOptions {
  model: string;
  /** A folder in the hub layout: `--host DIR`, `file://…`, the bundled copy, or an HTTP host's files made local (model-download.ts). */
  root: string;
  /** What `--host` said, for messages. */
  host: string;
  device: ServeDevice;
  /** Compute threads (onnxruntime-node's intra-op threads); null or unset: its default, every core. */
  threads?: number | null;
  /** The prefix cache's byte budget (default: the engine's). */
  prefixCacheBytes?: number;
  /** The hang watchdog's limits (default: the page's, facade/hang-watchdog.ts). */
  hang?: HangWatchdogOptions;
  /** Restarts in a row without a successful load before the supervisor gives up (default: the page's, 3). */
  maxRestarts?: number;
}

/**
 * The page's engine (engine/engine.ts) on onnxruntime-node, in a thread of this process
 * (engine-thread.ts), supervised as the page supervises its worker: the facade's
 * EngineSupervisor and hang watchdog restart a thread that crashes, exits or hangs, and the
 * requests it held fail with 503 `engine_unavailable`. The same loading, decision scoring, chat,
 * grammar, prefix cache and request queue as the page; only the runtime differs
 * (onnxruntime-node's CPU execution provider, on every core, where the page runs
 * onnxruntime-web). It reads the model from a folder in the hub layout, in place; an HTTP(S)
 * host's files are first made such a folder by model-download.ts (checked, stored, resumed).
 */
export function embeddedEngine(options: EmbeddedEngineOptions): EngineBinding {
  const { root, model } = options;
  if (!folderHasModel(root, model)) {
    throw new JevError('model_load_failed', `The model ${model} is not in ${root}: no ${join(root, model, 'config.json')}. --host names a folder in the hub layout ({folder}/{model}/config.json, {folder}/{model}/onnx/…).`, {
      param: 'model',
      details: { reason: 'model_not_found', model, host: options.host },
    });
  }
  // Errors cross the thread's port as the page's cross its worker's (both sides install it).
  installErrorTransfer();
  const data: EngineThreadData = {
    model,
    root,
    ...(options.threads ? { threads: options.threads } : {}),
    ...(options.device === 'cuda' ? { device: 'cuda' as const } : {}),
    ...(options.prefixCacheBytes === undefined ? {} : { prefixCacheBytes: options.prefixCacheBytes }),
  };
  const supervisor = new EngineSupervisor(() => engineThread(data, options.hang ?? {}), options.maxRestarts === undefined ? {} : { maxRestarts: options.maxRestarts });
  return supervisedBinding(supervisor);
}

/**
 * What the in-process engine needs, checked before anything is downloaded or started (serve.ts
 * calls it first): the engine's thread and onnxruntime-node (`runtimeInstalled`), and for
 * `--device cuda` the CUDA provider beside onnxruntime-node (cuda-provider.ts).
 */
export function checkEmbeddedRuntime(device: ServeDevice): void {
  const entry = engineThreadEntry();
  runtimeInstalled(entry);
  if (device === 'cuda') {
    requireCudaProvider(entry);
    // cuBLAS multiplies float32 matrices at TF32 precision where onnxruntime's CUDA provider lets it
    // (its default): products then differ from the CPU's by ~1e-3. Off, unless the user set it:
    // float32 answers within 1e-4 of the page's. Read by cuBLAS in this process's environment
    // (set here, on the main thread: a worker's process.env is its own copy).
    process.env['NVIDIA_TF32_OVERRIDE'] ??= '0';
  }
}

/**
 * Refuses at start what the engine's thread could not load: its entry (dist/lib/engine-thread.js
 * in the package, built by `npm run build:lib`), and onnxruntime-node, native, an optional peer
 * dependency of the package (not every user of the library runs the server), resolved as the
 * thread resolves it: from its entry.
 */
function runtimeInstalled(entry: URL): void {
  if (!existsSync(fileURLToPath(entry))) {
    throw new JevError('model_load_failed', `The in-process engine's thread is missing (${fileURLToPath(entry)}): this build of jev-local lacks it; rebuild with npm run build:lib, or serve with --backend sglang|vllm.`, {
      param: 'backend',
      details: { reason: 'engine_not_packaged' },
    });
  }
  try {
    createRequire(entry).resolve('onnxruntime-node');
  } catch {
    throw new JevError('model_load_failed', `The in-process engine runs on onnxruntime-node, which is not installed beside jev-local: npm i onnxruntime-node@${ORT_NODE_VERSION} (docs/server.md, "Installed as a package"), or serve with --backend sglang|vllm.`, {
      param: 'backend',
      details: { reason: 'runtime_not_installed', package: 'onnxruntime-node' },
    });
  }
}

/** The engine inside its thread (worker/engine.worker.node.ts): over the folder `data.root`, reporting to `host`. */
export function threadEngine(data: EngineThreadData, host: EngineHost): Engine {
  // Nothing written beside the package (transformers.js' own file cache): the engine's store is the one cache.
  env.useFSCache = false;
  const { root, model } = data;
  return new Engine({
    ...(data.prefixCacheBytes === undefined ? {} : { prefixCacheBytes: data.prefixCacheBytes }),
    runtime: { localModelPath: root, ...(data.threads ? { threads: data.threads } : {}), ...(data.device ? { nodeProvider: data.device } : {}) },
    isNode: true,
    host,
    source: () => ({ has: async (file) => folderOffers(root, model, file) }),
  });
}

/** Whether a folder holds `onnx/<file>` and every external data file its config.json declares for it. */
function folderOffers(root: string, model: string, file: string): boolean {
  const dir = join(root, model);
  if (!existsSync(join(dir, 'onnx', file))) return false;
  let config: unknown = null;
  try {
    config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as unknown;
  } catch {
    return true;
  }
  return externalDataFiles(config, `onnx/${file}`).every((f) => existsSync(join(dir, f)));
}
