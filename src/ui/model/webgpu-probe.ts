/**
 * Whether this page can use WebGPU, asked once of the browser (the engine asks again in its
 * worker; this answer is for explaining, not for choosing).
 */
export type WebGpuSupport =
  | { kind: 'available'; description: string; shaderF16: boolean }
  /** `navigator.gpu` exists but no adapter came back (blocklisted GPU, acceleration off). */
  | { kind: 'no-adapter' }
  /** No WebGPU API at all; `secure` says whether the page is a secure context (WebGPU needs one). */
  | { kind: 'no-api'; secure: boolean };

interface AdapterLike {
  features: { has(name: string): boolean };
  info?: { vendor?: string; architecture?: string; device?: string; description?: string };
}

interface GpuLike {
  requestAdapter(): Promise<AdapterLike | null>;
}

export function describeAdapter(adapter: AdapterLike): string {
  const info = adapter.info;
  if (!info) return 'WebGPU adapter';
  if (info.description) return info.description;
  const parts = [info.vendor, info.architecture, info.device].filter((p): p is string => !!p);
  return parts.length > 0 ? parts.join(' ') : 'WebGPU adapter';
}

export async function probeWebGpu(): Promise<WebGpuSupport> {
  const gpu = (navigator as Navigator & { gpu?: GpuLike }).gpu;
  if (!gpu) return { kind: 'no-api', secure: globalThis.isSecureContext === true };
  const adapter = await gpu.requestAdapter().catch(() => null);
  if (!adapter) return { kind: 'no-adapter' };
  return { kind: 'available', description: describeAdapter(adapter), shaderF16: adapter.features.has('shader-f16') };
}
