import { env } from '@huggingface/transformers';
import type { IntegrityCache } from './storage/integrity-cache.ts';
import { modelFetch } from './model-fetch.ts';
import { currentHandoff } from './model-handoff.ts';
import type { LoadTimer } from './load-timing.ts';
import { JevError } from '../../contract/index.ts';
import { RUNTIME_BUILD_REASON } from '../../protocol/engine-api.ts';
import { buildRuns, type OrtBuild, type OrtBuildChoice, type OrtDevice, ortWasmPaths, resolveOrtBuild } from '../runtime/ort-build.ts';
import { fetchRuntimeFromCache } from '../runtime/runtime-fetch.ts';
import { nodeSessionOptionsFor, type NodeSessionOptions } from './node-session-options.ts';

/** transformers.js' own fetch, as it was when the engine was imported; the engine wraps it once per load. */
const TRANSFORMERS_FETCH = env.fetch;

/** Where the engine finds its files. One typed object, applied to transformers.js' `env` in one place. */
export interface RuntimeConfig {
  /** Base URL of the self-hosted onnxruntime-web `.mjs`/`.wasm` files (browser); never a CDN. */
  ortBase?: string | undefined;
  /**
   * A folder of models in the hub layout, used instead of a host: on disk in Node; in a browser, a
   * path or URL, read as a host (`{folder}{model}/{file}`).
   */
  localModelPath?: string | undefined;
  /**
   * Compute threads. In a browser, onnxruntime-web's wasm threads (default: navigator.hardwareConcurrency
   * where the page is cross-origin isolated, else 1); in Node, onnxruntime-node's intra-op threads
   * (default: its own, every core).
   */
  threads?: number | undefined;
  /**
   * In Node, onnxruntime-node's execution provider: `cuda` runs the model on its CUDA provider
   * (nodes that provider has no kernel for run on the CPU, as onnxruntime places them); unset or
   * `cpu`: the CPU provider. Ignored in a browser.
   */
  nodeProvider?: 'cpu' | 'cuda' | undefined;
  /** The model-file cache (browser): the Cache API with size and hash checks. */
  modelCache?: IntegrityCache | undefined;
  /**
   * Which onnxruntime-web wasm build to load (src/engine/runtime/ort-build.ts): `cpu`, `jspi`,
   * `asyncify`, or `auto` / unset for the device's measured default. onnxruntime initialises its
   * module once per worker, so the first load's build stays for the worker's lifetime
   * (`pinRuntimeBuild`); a later choice is ignored.
   */
  ortBuild?: OrtBuildChoice | undefined;
}

/** The build the worker's onnxruntime was pointed at first (it cannot switch afterwards). */
let pinnedBuild: OrtBuild | null = null;
/** Where the last applied config serves onnxruntime's files from, and the build it asks for: the build is chosen once the load knows its device (`pinRuntimeBuild`). */
let runtimeFiles: { ortBase: string; choice: OrtBuildChoice | undefined } | null = null;
/** The wasm threads the worker's onnxruntime was given first (it starts them once). */
let pinnedThreads: number | null = null;

/** Applies `config` for a load; `timer` (load-timing.ts) times that load's reads of model files. */
export function applyRuntimeConfig(config: RuntimeConfig, host: string | undefined, timer: LoadTimer | null = null): void {
  const folder = config.localModelPath ? (config.localModelPath.endsWith('/') ? config.localModelPath : `${config.localModelPath}/`) : null;
  if (folder && !env.useFS) {
    // In a browser a model folder is a host on this origin, read as one. transformers.js checks a
    // local file's size with a whole GET whose body it never reads nor cancels: the browser goes on
    // buffering that download in the worker, outside the JavaScript heap, for as long as the worker
    // lives (measured in Chromium 156: 55 MiB per load of the 135M model, docs/memory.md). A host
    // gets a one-byte Range request instead, whose body is cancelled when the server sends it all.
    env.allowRemoteModels = true;
    env.allowLocalModels = false;
    env.remoteHost = new URL(folder, globalThis.location?.href).href;
    env.remotePathTemplate = '{model}/';
  } else {
    env.allowRemoteModels = !folder;
    env.allowLocalModels = !!folder;
    if (folder) env.localModelPath = folder;
    if (host) {
      env.remoteHost = host.endsWith('/') ? host : `${host}/`;
      env.remotePathTemplate = '{model}/resolve/{revision}/';
    }
  }
  // Model files read into one buffer each, cached by the engine's own cache (model-fetch.ts).
  if (TRANSFORMERS_FETCH) env.fetch = modelFetch(TRANSFORMERS_FETCH, config.modelCache ?? null, currentHandoff, timer);
  if (config.modelCache) {
    env.useBrowserCache = false;
    env.useCustomCache = false;
  }
  const wasm = env.backends.onnx?.wasm;
  if (wasm) {
    if (config.ortBase) {
      // Import onnxruntime's factory from its own URL rather than a blob: copy, so that a strict
      // Content-Security-Policy (script-src 'self') holds; offline, the service worker serves it.
      env.useWasmCache = false;
      // The build's files are named once the load knows its device (pinRuntimeBuild).
      runtimeFiles = { ortBase: config.ortBase, choice: config.ortBuild };
      // In a browser: its wasm compiled from the browser's stored copy, with the machine code kept from the last time (runtime-fetch.ts).
      if (inBrowser()) fetchRuntimeFromCache();
    } else runtimeFiles = null;
    // In a browser (an `ortBase`) onnxruntime-web starts its threads once per worker: the first load's count stays.
    const threads = config.threads ?? defaultThreads();
    wasm.numThreads = config.ortBase ? (pinnedThreads ??= threads) : threads;
  }
  askedThreads = config.threads ?? null;
  askedProvider = config.nodeProvider ?? 'cpu';
}

/**
 * Points onnxruntime-web at the build for a load on `device`, once the load knows its device and
 * before onnxruntime starts: the first call in a worker chooses it (the config's `ortBuild`, else
 * the device's default: ort-build.ts `resolveOrtBuild`) and it stays, since onnxruntime initializes
 * its module once per worker. Where the build pinned cannot run `device` (the wasm-only `cpu` build,
 * asked for WebGPU), throws `engine_unavailable` with `details.reason` `runtime_build`: a fresh
 * worker can (the client's supervisor starts one and loads there: facade/engine-supervisor.ts).
 * Returns the build, or null where no `ortBase` was applied (Node, tests).
 */
export function pinRuntimeBuild(device: OrtDevice): OrtBuild | null {
  const wasm = env.backends.onnx?.wasm;
  if (!runtimeFiles || !wasm) return null;
  if (pinnedBuild && !buildRuns(pinnedBuild, device)) {
    throw new JevError(
      'engine_unavailable',
      `This engine's onnxruntime is its wasm-only build (${pinnedBuild}), chosen by its first load, and cannot run ${device}: a new engine worker loads it.`,
      { param: 'device', details: { reason: RUNTIME_BUILD_REASON, build: pinnedBuild, device } },
    );
  }
  pinnedBuild ??= resolveOrtBuild(runtimeFiles.choice, device);
  wasm.wasmPaths = ortWasmPaths(runtimeFiles.ortBase, pinnedBuild);
  return pinnedBuild;
}

/** The threads the last applied config asked for; null: the runtime's default. */
let askedThreads: number | null = null;

/** The Node execution provider the last applied config asked for. */
let askedProvider: 'cpu' | 'cuda' = 'cpu';

/** onnxruntime-node's session options, as `nodeSessionOptionsFor` gives them for the threads and provider the last config asked. */
export function nodeSessionOptions(): NodeSessionOptions {
  return nodeSessionOptionsFor(askedThreads, askedProvider);
}

/** The execution provider Node sessions are created with. */
export function nodeProvider(): 'cpu' | 'cuda' {
  return askedProvider;
}

/** The compute threads a Node session was created with, where asked; null: onnxruntime-node's default. */
export function askedNodeThreads(): number | null {
  return askedThreads;
}

export function defaultThreads(): number {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  const cores = (globalThis.navigator as Navigator | undefined)?.hardwareConcurrency ?? 1;
  return isolated ? Math.max(1, cores) : 1;
}

/** The onnxruntime-web build this worker loads (null where no `ortBase` was applied: Node, tests). */
export function configuredOrtBuild(): OrtBuild | null {
  return pinnedBuild;
}

export function configuredThreads(): number {
  return env.backends.onnx?.wasm?.numThreads ?? 1;
}

/** A page or a worker of one (not Node): where there is an HTTP cache to read onnxruntime's files from. */
function inBrowser(): boolean {
  const g = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
  return typeof g.document !== 'undefined' || typeof g.WorkerGlobalScope !== 'undefined';
}
