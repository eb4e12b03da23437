/** Bytes of the WebGPU buffers made in this thread and not yet destroyed. */
export interface GpuBufferLedger {
  readonly bytes: number;
}

interface GpuBufferLike {
  destroy(): void;
}
interface GpuDeviceProto {
  createBuffer(descriptor: { size: number }): GpuBufferLike;
}

const KEY = Symbol.for('jev.gpuBufferLedger');

/**
 * Counts WebGPU buffers as they are made and destroyed, by wrapping `GPUDevice.prototype.createBuffer`
 * once per thread (installed before a load, so before onnxruntime makes its device). In the
 * engine's worker only onnxruntime makes buffers: the count is its weights, key/value caches and
 * buffer pool (which it keeps for reuse). Null where this thread has no WebGPU (Node, no adapter).
 */
export function gpuBufferLedger(): GpuBufferLedger | null {
  const device = (globalThis as { GPUDevice?: { prototype: GpuDeviceProto & { [KEY]?: GpuBufferLedger } } }).GPUDevice;
  if (!device) return null;
  const proto = device.prototype;
  const installed = proto[KEY];
  if (installed) return installed;
  const ledger = { bytes: 0 };
  const create = proto.createBuffer;
  proto.createBuffer = function (this: GpuDeviceProto, descriptor) {
    const buffer = create.call(this, descriptor);
    const size = descriptor.size;
    ledger.bytes += size;
    const destroy = buffer.destroy;
    let live = true;
    buffer.destroy = function (this: GpuBufferLike) {
      if (live) {
        live = false;
        ledger.bytes -= size;
      }
      destroy.call(this);
    };
    return buffer;
  };
  proto[KEY] = ledger;
  return ledger;
}
