import type { Device, Dtype } from './language-model.ts';

/**
 * Which ONNX format `dtype: auto` takes on each device, best first: the data the choice rests on.
 *
 * Each row lists the formats that run on that device, fastest first; formats within one inner
 * array measured alike (within the benchmark's noise), and among those the model's own
 * recommendation (`transformers.js_config.dtype` in its config.json) decides. A format missing
 * from a row is never chosen by `auto` there (it can still be asked for by name, unless the
 * device cannot run it at all: see `DEVICE_RUNS`).
 *
 * Measured with: (the command and the date of the run go here)
 *   npm run bench -- --json … (format rows: decode tok/s, prefill tok/s, decision ms, peak memory)
 * Numbers: (one line per device and format go here)
 */
export const DTYPE_PREFERENCE: Readonly<Record<DeviceClass, readonly (readonly Dtype[])[]>> = {
  /** WebGPU whose adapter has `shader-f16`: float16 arithmetic in shaders. */
  'webgpu-f16': [['q4f16'], ['fp16'], ['q4'], ['fp32'], ['q8']],
  /** WebGPU without `shader-f16` (SwiftShader here): no float16 format can run. */
  webgpu: [['q4'], ['fp32'], ['q8']],
  /** onnxruntime-web's WebAssembly CPU kernels. */
  wasm: [['q8'], ['q4'], ['fp32'], ['fp16'], ['q4f16']],
  /** onnxruntime-node's CPU kernels (tests and scripts in Node). */
  cpu: [['q8'], ['q4'], ['fp32'], ['fp16'], ['q4f16']],
};

/** A device as far as the formats it runs are concerned. */
export type DeviceClass = 'webgpu-f16' | 'webgpu' | 'wasm' | 'cpu';

export function deviceClass(device: Device, shaderF16: boolean): DeviceClass {
  if (device === 'webgpu') return shaderF16 ? 'webgpu-f16' : 'webgpu';
  return device;
}

/**
 * What each device cannot run at all, and why: a request for one of these is refused at load
 * time with `model_load_failed` naming the reason (never a failure in the middle of a request).
 */
export const DEVICE_CANNOT_RUN: Readonly<Record<DeviceClass, Partial<Record<Dtype, string>>>> = {
  'webgpu-f16': {},
  webgpu: {
    fp16: 'float16 arithmetic in shaders needs the WebGPU feature shader-f16, which this adapter lacks',
    q4f16: 'float16 arithmetic in shaders needs the WebGPU feature shader-f16, which this adapter lacks',
  },
  wasm: {},
  cpu: {},
};

/** The formats in order of preference on a device (ties flattened in table order). */
export function dtypePreference(device: Device, shaderF16: boolean): Dtype[] {
  return DTYPE_PREFERENCE[deviceClass(device, shaderF16)].flat();
}
