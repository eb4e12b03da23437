import type { JevError } from '../../../contract/index.ts';
import type { Device, Dtype } from '../../model/language-model.ts';
import { deviceCapacity, type DeviceCapacity } from './device-capacity.ts';
import { loadFailure, type LoadFailureDetails } from '../load-failure.ts';
import { DTYPE_FILES, offeredDtypes, workingDtypes, type ModelSource } from '../load-model.ts';
import { estimateLoad, type MemoryEstimate } from './memory-estimate.ts';
import { rewritesOn } from '../session-rewrites.ts';
import { shortfall, type Shortfall } from './memory-fit.ts';

/** A source that can say its files' sizes before downloading them (http-source.ts). */
export interface SizedModelSource extends ModelSource {
  bytes?(file: string): Promise<number | null>;
}

export interface MemoryCheck {
  model: string;
  device: Device;
  shaderF16: boolean;
  dtype: Dtype;
  /** The dtype was `auto`: a smaller format that fits is taken instead of refusing. */
  auto: boolean;
  source: SizedModelSource;
  /** The model's config.json, for the shape of its largest weight. */
  config: unknown;
  /** What the device offers; read here by default. */
  capacity?: DeviceCapacity;
  /** The load's `quantizeHead` (LoadOptions): whether each format's embedding and lm_head become 8-bit on wasm. */
  quantizeHead?: boolean | undefined;
}

/** A model and dtype that fit, with its files' bytes. */
export interface Alternative {
  model: string;
  dtype: Dtype;
  bytes: number;
}

/**
 * The check before the download: the memory the load will need (memory-estimate.ts), from the
 * sizes the host states, against what the device offers (device-capacity.ts). Resolves with the
 * dtype to load: the one asked for where it fits (or where its size or the device's limits are not
 * known), under `auto` the device's next format that fits; else rejects with `model_load_failed`,
 * `details.reason: "insufficient_memory"`, naming the limit, the bytes needed and available there,
 * and in `details.alternative` a dtype of the same model that fits (or null: the playground then
 * offers a model of its registry, registry-alternative.ts).
 */
export async function checkMemory(check: MemoryCheck): Promise<Dtype> {
  const { model, device, dtype, source } = check;
  if (device === 'cpu' || !source.bytes) return dtype;
  const bytes = await source.bytes(DTYPE_FILES[dtype]);
  if (bytes === null) return dtype;
  const capacity = check.capacity ?? (await deviceCapacity(device));
  const short = shortfall(estimateFor(check, dtype, bytes), capacity);
  if (!short) return dtype;
  const alternative = await fittingDtype(check, capacity);
  if (check.auto && alternative) return alternative.dtype;
  throw insufficientMemory(model, dtype, device, bytes, short, capacity, alternative);
}

/** The first of the device's other formats, best first, that the model offers and that fits. */
async function fittingDtype(check: MemoryCheck, capacity: DeviceCapacity): Promise<Alternative | null> {
  const { model, device, shaderF16, dtype, source } = check;
  for (const other of workingDtypes(device, shaderF16, await offeredDtypes(source), [dtype])) {
    const bytes = await source.bytes!(DTYPE_FILES[other]);
    if (bytes !== null && !shortfall(estimateFor(check, other, bytes), capacity)) return { model, dtype: other, bytes };
  }
  return null;
}

/** The estimate of a load of `dtype` as this check's load would make it (with its rewrites). */
function estimateFor(check: MemoryCheck, dtype: Dtype, bytes: number): MemoryEstimate {
  return estimateLoad(check.device, dtype, bytes, check.config, { int8Head: rewritesOn(check.device, dtype, check.quantizeHead).int8Head });
}

const LIMIT_WORDS: Record<Shortfall['limit'], string> = {
  gpu_buffer: "its largest weight as one WebGPU buffer, more than the adapter's maxBufferSize / maxStorageBufferBindingSize allow",
  wasm_heap: "onnxruntime's wasm memory, more than the 4 GiB a 32-bit WebAssembly memory can address",
  device_memory: "memory, more than this device has (navigator.deviceMemory)",
};

/** The refusal of a load that will not fit, before anything is downloaded. */
export function insufficientMemory(model: string, dtype: Dtype, device: Device, bytes: number, short: Shortfall, capacity: DeviceCapacity, alternative: Alternative | null): JevError {
  const instead = alternative ? ` Load dtype ${alternative.dtype} instead (?dtype=${alternative.dtype}, ${gb(alternative.bytes)} to download).` : ' The model offers no smaller format that fits: choose a smaller model.';
  return loadFailure(
    `${model} (${dtype}, ${gb(bytes)}) will not fit on ${device}: loading it needs about ${gb(short.needed)} of ${LIMIT_WORDS[short.limit]} (${gb(short.available)}). Nothing was downloaded.${instead}`,
    {
      reason: 'insufficient_memory',
      model,
      dtype,
      device,
      limit: short.limit,
      needed: short.needed,
      available: short.available,
      alternative,
      capacity: { ...capacity },
    },
    'dtype',
  );
}

/** Bytes in decimal units, as the hub lists sizes. */
function gb(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  return bytes >= 1e6 ? `${Math.round(bytes / 1e6)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} kB`;
}

/**
 * A load that ran out of memory although the estimate let it through (load-failure.ts): the same
 * refusal, now naming the device's next format of the model with smaller files, where there is one.
 */
export async function withSmallerDtype(failure: JevError, check: MemoryCheck): Promise<JevError> {
  const { model, device, shaderF16, dtype, source } = check;
  if (failure.details?.['reason'] !== 'insufficient_memory' || failure.details['alternative'] || !source.bytes) return failure;
  const bytes = await source.bytes(DTYPE_FILES[dtype]);
  if (bytes === null) return failure;
  for (const other of workingDtypes(device, shaderF16, await offeredDtypes(source), [dtype])) {
    const size = await source.bytes(DTYPE_FILES[other]);
    if (size !== null && size < bytes) {
      const details: LoadFailureDetails = { ...(failure.details as unknown as LoadFailureDetails), alternative: { model, dtype: other, bytes: size } };
      const words = failure.message.replace(/ Load a smaller dtype or model\.$/, '');
      return loadFailure(`${words} Load dtype ${other} instead (?dtype=${other}, ${gb(size)} to download).`, details, 'dtype', failure.cause);
    }
  }
  return failure;
}
