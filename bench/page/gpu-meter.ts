/**
 * Counts the bytes of live WebGPU buffers by wrapping GPUDevice.createBuffer and
 * GPUBuffer.destroy before onnxruntime creates its device. onnxruntime-web reports no memory
 * figures of its own; this sees every buffer it allocates (weights, KV cache, activations).
 * Buffers dropped without destroy() are still counted as live (an upper bound).
 */
export interface GpuMeter {
  live(): number;
  peak(): number;
  resetPeak(): void;
}

export function installGpuMeter(): GpuMeter | null {
  const g = globalThis as unknown as {
    GPUDevice?: { prototype: { createBuffer(desc: { size: number }): object } };
    GPUBuffer?: { prototype: { destroy(): void } };
  };
  if (!g.GPUDevice || !g.GPUBuffer) return null;
  const sizes = new WeakMap<object, number>();
  let live = 0;
  let peak = 0;
  const create = g.GPUDevice.prototype.createBuffer;
  g.GPUDevice.prototype.createBuffer = function (this: unknown, desc: { size: number }) {
    const buffer = create.call(this, desc);
    sizes.set(buffer, desc.size);
    live += desc.size;
    if (live > peak) peak = live;
    return buffer;
  };
  const destroy = g.GPUBuffer.prototype.destroy;
  g.GPUBuffer.prototype.destroy = function (this: object) {
    const size = sizes.get(this);
    if (size !== undefined) {
      live -= size;
      sizes.delete(this);
    }
    return destroy.call(this);
  };
  return {
    live: () => live,
    peak: () => peak,
    resetPeak: () => {
      peak = live;
    },
  };
}
