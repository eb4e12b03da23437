import type { ClientOptions } from '../client/create-client.ts';
import { DEFAULT_HOST, DEFAULT_MODEL } from '../facade/defaults.ts';
import type { DeviceChoice, DtypeChoice } from '../protocol/engine-api.ts';

const DEVICES: readonly DeviceChoice[] = ['webgpu', 'wasm', 'auto'];
const DTYPES: readonly DtypeChoice[] = ['fp32', 'fp16', 'q8', 'q4', 'q4f16', 'auto'];

export type PageParams = Required<Pick<ClientOptions, 'model' | 'host' | 'device' | 'dtype'>>;

/** The page's query parameters (CONTRACT §2): model, host, device, dtype. */
export function pageParams(search: string): PageParams {
  const q = new URLSearchParams(search);
  const device = q.get('device') as DeviceChoice | null;
  const dtype = q.get('dtype') as DtypeChoice | null;
  return {
    model: q.get('model') || DEFAULT_MODEL,
    host: (q.get('host') || DEFAULT_HOST).replace(/\/+$/, ''),
    device: device && DEVICES.includes(device) ? device : 'auto',
    dtype: dtype && DTYPES.includes(dtype) ? dtype : 'auto',
  };
}

/**
 * The address with the model, device and dtype of a load written into it, so a reload opens the
 * same; the host and anything else in the address stay as they were.
 */
export function withParams(href: string, target: Pick<PageParams, 'model' | 'device' | 'dtype'>): string {
  const url = new URL(href);
  url.searchParams.set('model', target.model);
  for (const name of ['device', 'dtype'] as const) {
    if (target[name] === 'auto') url.searchParams.delete(name);
    else url.searchParams.set(name, target[name]);
  }
  return url.href;
}
