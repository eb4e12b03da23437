import { env } from '@huggingface/transformers';

/** What the engine needs of a `GPUDevice`: its loss, and a way to cause one (a fault drill). */
export interface GpuDeviceLike {
  readonly lost: Promise<{ reason?: string; message?: string }>;
  destroy(): void;
}

/**
 * The GPUDevice onnxruntime-web runs its WebGPU sessions on, once one exists. ORT's
 * `env.webgpu.device` is documented as a Promise of the device (1.2x) and set to the device
 * itself by the WebGPU EP's build once a session is created (1.3x); both are read here. Null
 * where there is none (wasm, Node, or an ORT that does not expose it).
 */
export async function webgpuDevice(): Promise<GpuDeviceLike | null> {
  const flags = env.backends.onnx?.webgpu as { device?: unknown } | undefined;
  let device: unknown;
  try {
    device = await flags?.device;
  } catch {
    return null;
  }
  return isDevice(device) ? device : null;
}

function isDevice(x: unknown): x is GpuDeviceLike {
  return typeof x === 'object' && x !== null && typeof (x as GpuDeviceLike).destroy === 'function' && (x as GpuDeviceLike).lost instanceof Promise;
}
