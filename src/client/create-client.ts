import type { DeviceChoice, DtypeChoice, LoadEvent, OrtBuildName } from '../protocol/engine-api.ts';
import { installErrorTransfer } from '../protocol/comlink-errors.ts';
import { EngineSupervisor, type RestartEvent } from '../facade/engine-supervisor.ts';
import { supervisedBinding } from '../facade/supervised-binding.ts';
import { workerInstance } from '../facade/worker-instance.ts';
import type { AdmissionOptions } from '../facade/admission.ts';
import type { HangWatchdogOptions } from '../facade/hang-watchdog.ts';
import type { JevClient } from '../facade/jev-client.ts';
import { DEFAULT_HOST, DEFAULT_MODEL } from '../facade/defaults.ts';
import { createRemoteClient } from '../facade/remote-client.ts';
import { checkDecisionPolicy } from '../facade/openai-decisions.ts';
import { clientForEngine } from './client-for-engine.ts';
import type { EngineBinding } from '../facade/engine-client.ts';
import { SharedEngine } from '../facade/sharing/shared-engine.ts';
import { JevError } from '../contract/index.ts';

export interface ClientOptions {
  /**
   * A server that speaks the same HTTP specification: when set, the client calls it instead of
   * running a model in this browser (the other options but apiKey then do not apply).
   */
  baseURL?: string;
  /** Model id under `host`, in the Hugging Face layout. */
  model?: string;
  /** Base URL of model files: `{host}/{model}/resolve/main/{file}`. */
  host?: string;
  device?: DeviceChoice;
  dtype?: DtypeChoice;
  /** Load progress: bytes per file, fallbacks, ready. */
  onProgress?: (event: LoadEvent) => void;
  /** When set, HTTP requests (client.fetch, the service worker) must carry `Bearer <apiKey>`. */
  apiKey?: string;
  /** Mounts the HTTP endpoints under this prefix (e.g. `/jev`), clear of the app's own routes. */
  basePath?: string;
  /** Where onnxruntime-web's files are served; defaults to the `ort/` folder shipped with the library. */
  ortBase?: string;
  /**
   * Called when the engine's worker died (crash, or WebGPU device loss) and was restarted: the
   * requests it held failed with `engine_unavailable`; the model is being reloaded.
   */
  onRestart?: (event: RestartEvent) => void;
  /**
   * Bounds that keep every request answered (docs/limits.md): `maxQueued` requests may wait
   * behind the one served (default 256; past it: 429 `queue_full` with Retry-After);
   * `hangAfterMs` (default 15,000) and `loadAfterMs` (default 600,000) bound how long the
   * engine's worker may stay unresponsive before it is taken for hung, terminated and restarted.
   */
  limits?: Pick<AdmissionOptions, 'maxQueued'> & Pick<HangWatchdogOptions, 'hangAfterMs' | 'loadAfterMs'>;
  /**
   * `origin` (default): the tabs of this origin that load the same model (same host, id, device
   * and dtype) share one engine. One tab, elected by a Web Lock, runs it in its worker; the others
   * send it their requests over a BroadcastChannel and get the same answers, with no copy of the
   * model in their own memory. When that tab closes or crashes, another takes over and loads the
   * model from the browser's cache (docs/sharing.md). `tab`: this tab runs an engine of its own.
   */
  share?: 'origin' | 'tab';
  /**
   * With `share: 'origin'`: the bytes of model weights that the engines shared by this origin's
   * tabs (one per model) may hold together. A tab that would host a model past it unloads it again
   * and refuses it (`model_load_failed`, `details.reason: "insufficient_memory"`). No budget by default.
   */
  sharedMemoryBudget?: number;
  /**
   * The embedding and lm_head read from one int8 matrix on wasm (docs/models.md). Unset: for every
   * format but fp32, which stays exact. `true`: for fp32 too. `false`: for none (about 80 MiB more
   * for a 135M model's q4 or q8; since the engine computes the 8-bit head in its own kernel, the
   * float head decodes no faster).
   */
  quantizeHead?: boolean;
  /**
   * onnxruntime-web's wasm build: `cpu` (wasm only), `jspi`, `asyncify`, or `auto` (default: the
   * device's measured default, `cpu` on wasm and JSPI on WebGPU where the browser has it;
   * docs/threads.md). For measuring one against another; a worker keeps the build its first load
   * chose (a `cpu` worker asked for WebGPU later is replaced by a fresh one).
   */
  ortBuild?: OrtBuildName | 'auto';
  /**
   * onnxruntime-web's wasm threads, a whole number from 1 to 256 (default: one per core where the
   * page is cross-origin isolated, else 1; docs/threads.md). The engine's worker keeps the count its
   * first load started with; with `share: 'origin'`, the hosting tab's count serves every tab.
   */
  threads?: number;
  /**
   * The label-mass floor (0..1; default 0: never) below which a question of OpenAI's Decisions
   * shape (`client.decisions.createOpenAI`, `POST /v1/decisions`) answers `{ type: "refusal" }`:
   * the model put too little of its probability on the question's labels for the answer to mean
   * anything (docs/decisions.md). A calibration profile's `refuse_below_label_mass` overrides it.
   */
  refuseBelowLabelMass?: number;
}

/**
 * Starts the engine in a Web Worker, loads the model, and returns the client. Calls made before
 * the model is ready wait for it. With `share: 'origin'` (the default) the tabs of this origin
 * that load the same model share one engine, hosted by one of them (docs/sharing.md).
 */
export function createClient(options: ClientOptions = {}): JevClient {
  const policy = checkDecisionPolicy({ refuseBelowLabelMass: options.refuseBelowLabelMass });
  const threads = options.threads === undefined ? undefined : checkThreads(options.threads);
  if (options.baseURL) return createRemoteClient({ baseURL: options.baseURL, apiKey: options.apiKey, ...policy });
  installErrorTransfer();
  const own = () => workerBinding(options);
  const canShare = typeof navigator !== 'undefined' && !!navigator.locks && typeof BroadcastChannel === 'function';
  const binding =
    (options.share ?? 'origin') === 'origin' && canShare
      ? new SharedEngine({
          spawn: own,
          locks: navigator.locks,
          openChannel: (name) => new BroadcastChannel(name),
          budgetBytes: options.sharedMemoryBudget,
        }).binding
      : own();
  return clientForEngine(
    binding,
    {
      model: options.model ?? DEFAULT_MODEL,
      host: options.host ?? DEFAULT_HOST,
      device: options.device ?? 'auto',
      dtype: options.dtype ?? 'auto',
      ortBase: options.ortBase,
      quantizeHead: options.quantizeHead,
      ...(options.ortBuild ? { ortBuild: options.ortBuild } : {}),
      ...(threads !== undefined ? { threads } : {}),
    },
    options.onProgress,
    { apiKey: options.apiKey, basePath: options.basePath },
    { maxQueued: options.limits?.maxQueued },
    policy,
  );
}

/** This tab's own engine: a worker, restarted by the supervisor when it dies (docs/reliability.md). */
function workerBinding(options: ClientOptions): EngineBinding {
  const supervisor = new EngineSupervisor(
    () =>
      workerInstance(new Worker(new URL('../../worker/engine.worker.ts', import.meta.url), { type: 'module', name: 'jev-engine' }), {
        hangAfterMs: options.limits?.hangAfterMs,
        loadAfterMs: options.limits?.loadAfterMs,
      }),
    { onRestart: options.onRestart },
  );
  return supervisedBinding(supervisor);
}

/** The `threads` option, checked: a whole number from 1 to 256, else JevError `invalid_request` naming it. */
function checkThreads(threads: unknown): number {
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1 || threads > 256) {
    throw new JevError('invalid_request', `'threads' must be a whole number from 1 to 256, got ${JSON.stringify(threads) ?? String(threads)}.`, { param: 'threads' });
  }
  return threads;
}
