import type { Device, Dtype } from '../model/language-model.ts';

/**
 * Which ONNX format `dtype: auto` takes on each device, best first: the data the choice rests on.
 *
 * Each row lists the formats that run on that device, fastest first; formats within one inner
 * array measured alike (within the benchmark's noise), and among those the model's own
 * recommendation (`transformers.js_config.dtype` in its config.json) decides. A format missing
 * from a row is never chosen by `auto` there (it can still be asked for by name, unless the
 * device cannot run it at all: see `DEVICE_RUNS`).
 *
 * wasm, measured with `npm run bench -- --json out.json --no-md --no-grid --models smollm2-135m-random
 * --reps 2 --peer-reps 2` on commit 14e9d86 (Chromium 156, 2 cores), the SmolLM2-135M-shaped model's
 * format rows (median decode tok/s, prefill tok/s, one 4-question decision over a 512-token state,
 * peak renderer RSS):
 *   q8     decode 20.0, prefill 298, decision 3.59 s, peak 1336 MiB
 *   fp32   decode 18.1, prefill 224, decision 4.64 s, peak 2208 MiB
 *   fp16   decode 18.2, prefill 188, decision 5.74 s, peak 1525 MiB
 *   q4     decode  6.4, prefill 203, decision 5.45 s, peak 1248 MiB
 *   q4f16  decode  6.4, prefill 178, decision 6.23 s, peak 1092 MiB
 * q4 decoded 3× slower: onnxruntime's CPU MatMulNBits has no 4-bit kernel for wasm and dequantizes
 * the whole weight matrix on every call. A wasm load now rewrites q4's projections into 8-bit
 * integer products (int8-projections.ts); measured again on de11d1e (docs/models.md, the same
 * rows with `--no-peers`): q8 41.4 tok/s, 2.69 s; q4 41.7, 2.77 s; q4f16 32.6, 3.89 s; fp32 41.8,
 * 5.08 s; fp16 30.5, 5.84 s. q8 stays first (as fast as q4, and it rounds less); the order below it
 * is left as it was, though q4 and q4f16 now answer decisions faster than fp32 and fp16.
 * onnxruntime-node (tests only) takes the wasm order; it is not measured separately.
 * WebGPU: not measured. These machines' only adapter is SwiftShader (WebGPU emulated on the CPU,
 * without shader-f16), whose timings say nothing about a GPU; the rows keep the hub's own order
 * (its exports recommend q4f16 where shader-f16 exists, `transformers.js_config.dtype`).
 */
export const DTYPE_PREFERENCE: Readonly<Record<DeviceClass, readonly (readonly Dtype[])[]>> = {
  /** WebGPU whose adapter has `shader-f16`: float16 arithmetic in shaders. */
  'webgpu-f16': [['q4f16'], ['fp16'], ['q4'], ['fp32'], ['q8']],
  /** WebGPU without `shader-f16` (SwiftShader here): no float16 format can run. */
  webgpu: [['q4'], ['fp32'], ['q8']],
  /** onnxruntime-web's WebAssembly CPU kernels. */
  wasm: [['q8'], ['fp32'], ['fp16'], ['q4'], ['q4f16']],
  /** onnxruntime-node's CPU kernels (tests and scripts in Node). */
  cpu: [['q8'], ['fp32'], ['fp16'], ['q4'], ['q4f16']],
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
