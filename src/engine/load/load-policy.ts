import { JevError } from '../../contract/index.ts';
import type { LoadEvent, LoadOptions } from '../../protocol/engine-api.ts';
import type { ModelStorageStatus } from '../../protocol/storage-status.ts';
import type { Dtype, LanguageModel } from '../model/language-model.ts';
import type { CheckedModelSource } from './http-source.ts';
import { deviceMayFallBack, loadFailure, loadFailureReason, originOf, statusFailure } from './load-failure.ts';
import {
  chooseDtype,
  DTYPE_FILES,
  exporterDtype,
  loadLanguageModel,
  offeredDtypes,
  resolveDevice,
  withInstead,
  workingDtypes,
  type ModelSource,
  type ResolvedDevice,
} from './load-model.ts';
import { checkMemory, withSmallerDtype, type MemoryCheck } from './memory/memory-check.ts';
import type { IntegrityCache } from './storage/integrity-cache.ts';
import type { LoadTimer } from './load-timing.ts';
import { pinRuntimeBuild } from './runtime-env.ts';
import { storageMark, storageReport } from './storage/storage-report.ts';

/**
 * The steps a load is made of, each a function of load-model.ts or memory/ by default; a test
 * passes its own to drive every branch of the policy without a device or a model.
 */
export interface LoadSteps {
  resolveDevice: typeof resolveDevice;
  /** onnxruntime-web's build for the device resolved, before anything else of the load (runtime-env.ts). */
  pinRuntimeBuild: typeof pinRuntimeBuild;
  loadLanguageModel: typeof loadLanguageModel;
  checkMemory: typeof checkMemory;
}

const DEFAULT_STEPS: LoadSteps = { resolveDevice, pinRuntimeBuild, loadLanguageModel, checkMemory };

export interface LoadPolicyDeps {
  /** Where the model's files are asked for (http-source.ts, or the engine's configured source). */
  source: ModelSource & Partial<CheckedModelSource>;
  /** In Node the device is onnxruntime-node's CPU (resolveDevice). */
  isNode: boolean;
  /** The integrity-checked model cache (browser): its refusals name a corrupt download; its records, `status().storage`. */
  modelCache?: IntegrityCache | undefined;
  /** The load's events (progress, `fallback`). */
  onEvent: (e: LoadEvent) => void;
  steps?: Partial<LoadSteps>;
  /** The load's timing (load-timing.ts), handed to the load's steps; `status().lastLoad` reports it. */
  timer?: LoadTimer | undefined;
}

/** A model loaded under the policy, with what the engine's status reports of the load. */
export interface PolicyLoad {
  lm: LanguageModel;
  /** The WebGPU adapter it runs on (its description), or null. */
  adapter: string | null;
  /** What the load stored of the model's files; null without a model cache. */
  storage: ModelStorageStatus | null;
}

/**
 * The load policy: from load options to a loaded model, every failure named by its cause
 * (load-failure.ts). In order:
 *
 * 1. `source.check()` first reaches the model at all: a host that cannot be reached, refuses CORS
 *    or lacks the model fails here, naming that, before any format is chosen or device tried.
 * 2. The device (`resolveDevice`) and onnxruntime-web's build for it (`pinRuntimeBuild`: a worker
 *    whose build cannot run that device fails with `engine_unavailable`, reason `runtime_build`,
 *    before any work, and its supervisor loads again in a fresh worker), then on it the format (`chooseDtype`; "none of the files" is
 *    `no_model_files`, or where a host did not answer, that), a format named by hand checked for
 *    its files (`file_missing`), the memory check before the download (`checkMemory`), the load.
 * 3. Device fallback: where WebGPU was only preferred (`device: "auto"`), a fault of the device
 *    loads again on wasm (a `fallback` event); a fault of the files or their host would meet
 *    wasm the same, and is reported.
 * 4. A download the integrity cache refused (its SHA-256 is not the one its host states) fails
 *    the load as `file_corrupt`, whatever else went wrong, and a model loaded meanwhile is disposed.
 */
export async function loadWithPolicy(options: LoadOptions, deps: LoadPolicyDeps): Promise<PolicyLoad> {
  const steps: LoadSteps = { ...DEFAULT_STEPS, ...deps.steps };
  const { source, modelCache, onEvent } = deps;
  const config = (await source.check?.()) ?? null;
  const refusedBefore = modelCache?.refused.length ?? 0;
  const corrupt = () => corruptSince(modelCache, refusedBefore, options);
  const storedBefore = modelCache && storageMark(modelCache);
  let resolved = await steps.resolveDevice(options.device, deps.isNode);
  if (resolved.device !== 'cpu') steps.pinRuntimeBuild(resolved.device);
  let lm: LanguageModel;
  try {
    try {
      lm = await loadOn(options, resolved, source, config, onEvent, steps, deps.timer);
    } catch (e) {
      if (resolved.device !== 'webgpu' || options.device === 'webgpu' || !deviceMayFallBack(e) || corrupt()) throw e;
      onEvent({ type: 'fallback', from: 'webgpu', to: 'wasm', reason: (e as Error).message });
      resolved = { device: 'wasm', shaderF16: false, adapter: null };
      steps.pinRuntimeBuild('wasm'); // the WebGPU build pinned runs wasm too
      lm = await loadOn(options, resolved, source, config, onEvent, steps, deps.timer);
    }
  } catch (e) {
    throw corrupt() ?? e;
  }
  const refused = corrupt();
  if (refused) {
    await lm.dispose();
    throw refused;
  }
  const storage = modelCache && storedBefore ? await storageReport(modelCache, storedBefore, source.base ?? '') : null;
  return { lm, adapter: resolved.adapter, storage };
}

/** Chooses the format and loads it on one device; every failure names its cause (load-failure.ts). */
async function loadOn(
  options: LoadOptions,
  resolved: ResolvedDevice,
  source: ModelSource & Partial<CheckedModelSource>,
  config: unknown,
  onEvent: (e: LoadEvent) => void,
  steps: LoadSteps,
  timer?: LoadTimer,
): Promise<LanguageModel> {
  const { device, shaderF16 } = resolved;
  let dtype: Dtype;
  try {
    dtype = await chooseDtype(options.dtype, device, shaderF16, source, exporterDtype(config));
  } catch (e) {
    throw await dtypeFailure(e, options, source);
  }
  if (options.dtype !== 'auto' && source.missing) {
    // A format asked for by name: its graph and external data must be there.
    const missing = await source.missing(DTYPE_FILES[dtype]);
    if (missing.length > 0) {
      const offered = await offeredDtypes(source);
      throw statusFailure(`${source.base}${missing[0]}`, 404, { model: options.model, base: source.base ?? '', dtype, device, offered });
    }
  }
  // Before the download: will it fit? (memory-check.ts; under `auto` a smaller format that fits.)
  const memory: MemoryCheck = { model: options.model, device, shaderF16, dtype, auto: options.dtype === 'auto', source, config, quantizeHead: options.quantizeHead };
  dtype = await steps.checkMemory(memory);
  try {
    return await steps.loadLanguageModel(options.model, device, dtype, onEvent, { shaderF16, quantizeHead: options.quantizeHead, timer });
  } catch (e) {
    if (loadFailureReason(e) === 'insufficient_memory') throw await withSmallerDtype(e as JevError, { ...memory, dtype });
    if (loadFailureReason(e) !== 'unsupported_format' || (e as JevError).details?.['instead']) throw e;
    // Name a format that would work, now that one is needed (looking costs a request per format).
    const instead = workingDtypes(device, shaderF16, await offeredDtypes(source), [dtype])[0];
    if (!instead) throw e;
    throw withInstead(e as JevError, instead);
  }
}

/** A download of this load that did not match the SHA-256 its host states (the integrity cache refused to store it). */
function corruptSince(cache: IntegrityCache | undefined, before: number, options: LoadOptions): JevError | null {
  const refused = cache?.refused.slice(before)[0];
  if (!refused) return null;
  return loadFailure(
    `The download of ${refused.key} is corrupt: its SHA-256 is ${refused.sha256}, ${originOf(refused.key)} states ${refused.stated}. Nothing of it was stored; load again to fetch it anew, and if this persists the host serves a damaged file.`,
    { reason: 'file_corrupt', host: originOf(refused.key), url: refused.key, model: options.model },
  );
}

/** chooseDtype's refusals, with the reason its words stand for. */
async function dtypeFailure(e: unknown, options: LoadOptions, source: ModelSource & Partial<CheckedModelSource>): Promise<unknown> {
  if (!JevError.is(e) || e.code !== 'model_load_failed' || loadFailureReason(e) || e.details?.['reason']) return e;
  if (e.param !== 'model') return e;
  // "None of the files": where a host did not answer, that is the cause, not the model.
  const unanswered = await source.unanswered?.();
  if (unanswered) return unanswered;
  const looked = Object.values(DTYPE_FILES).map((f) => `onnx/${f}`);
  return loadFailure(`${e.message.replace(/\.$/, '')} at ${source.base ?? 'its host'}: none of ${looked.join(', ')} is there (with the external data its config.json declares).`, {
    reason: 'no_model_files',
    model: options.model,
    ...(source.base ? { host: originOf(source.base) } : {}),
  });
}
