import { AutoModelForCausalLM, AutoTokenizer, type ProgressInfo } from '@huggingface/transformers';
import { JevError } from '../contract/index.ts';
import type { DtypeChoice, DeviceChoice, LoadEvent } from '../protocol/engine-api.ts';
import { LanguageModel, type Device, type Dtype } from './language-model.ts';

/** The ONNX file each dtype reads, in the layout of the hub's transformers.js exports. */
export const DTYPE_FILES: Record<Dtype, string> = {
  fp32: 'model.onnx',
  fp16: 'model_fp16.onnx',
  q8: 'model_quantized.onnx',
  q4: 'model_q4.onnx',
  q4f16: 'model_q4f16.onnx',
};

/** Best first, per device: what is fastest there without losing what the adapter cannot run. */
export function dtypePreference(device: Device, shaderF16: boolean): Dtype[] {
  if (device === 'webgpu') return shaderF16 ? ['q4f16', 'fp16', 'q4', 'fp32', 'q8'] : ['q4', 'fp32', 'q8'];
  return ['q8', 'q4', 'fp32', 'fp16'];
}

export interface ModelSource {
  /** Whether the model offers `onnx/<file>`. */
  has(file: string): Promise<boolean>;
}

export async function chooseDtype(requested: DtypeChoice, device: Device, shaderF16: boolean, source: ModelSource): Promise<Dtype> {
  if (requested !== 'auto') {
    if (requested.endsWith('f16') && device === 'webgpu' && !shaderF16) {
      throw new JevError('model_load_failed', `dtype ${requested} needs the WebGPU feature shader-f16, which this adapter lacks; use q4 or fp32.`, { param: 'dtype' });
    }
    return requested;
  }
  for (const dtype of dtypePreference(device, shaderF16)) {
    if (await source.has(DTYPE_FILES[dtype])) return dtype;
  }
  throw new JevError('model_load_failed', 'The model offers none of the ONNX files this engine reads (onnx/model*.onnx).', { param: 'model' });
}

export interface ResolvedDevice {
  device: Device;
  shaderF16: boolean;
  adapter: string | null;
}

/** `auto` is WebGPU when an adapter exists, else wasm; in Node it is onnxruntime-node's CPU. */
export async function resolveDevice(requested: DeviceChoice, isNode: boolean): Promise<ResolvedDevice> {
  if (isNode) return { device: 'cpu', shaderF16: false, adapter: null };
  if (requested === 'wasm') return { device: 'wasm', shaderF16: false, adapter: null };
  const gpu = (globalThis.navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } } | undefined)?.gpu;
  const adapter = gpu ? ((await gpu.requestAdapter().catch(() => null)) as { features: Set<string>; info?: { description?: string; vendor?: string } } | null) : null;
  if (!adapter) {
    if (requested === 'webgpu') throw new JevError('model_load_failed', 'WebGPU was requested but this browser offers no WebGPU adapter.', { param: 'device' });
    return { device: 'wasm', shaderF16: false, adapter: null };
  }
  const description = adapter.info?.description || adapter.info?.vendor || 'WebGPU adapter';
  return { device: 'webgpu', shaderF16: adapter.features.has('shader-f16'), adapter: description };
}

/** Loads tokenizer and model, reporting bytes per file. */
export async function loadLanguageModel(
  model: string,
  device: Device,
  dtype: Dtype,
  onEvent: (e: LoadEvent) => void,
): Promise<LanguageModel> {
  const progress_callback = (info: ProgressInfo) => {
    if (info.status === 'progress') onEvent({ type: 'file', file: info.file, loaded: info.loaded, total: info.total });
    else if (info.status === 'done') onEvent({ type: 'file-done', file: info.file });
  };
  try {
    const tokenizer = await AutoTokenizer.from_pretrained(model, { progress_callback });
    const lm = await AutoModelForCausalLM.from_pretrained(model, { device, dtype, progress_callback });
    return new LanguageModel(model, lm, tokenizer, device, dtype);
  } catch (e) {
    if (JevError.is(e)) throw e;
    throw new JevError('model_load_failed', `Loading ${model} (${dtype} on ${device}) failed: ${(e as Error).message ?? e}`, { param: 'model', cause: e });
  }
}
