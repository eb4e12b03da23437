import type { ClientOptions } from '../../client/create-client.ts';
import { parseOrtBuild } from '../../engine/runtime/ort-build.ts';
import { DEFAULT_HOST, DEFAULT_MODEL } from '../../facade/defaults.ts';
import type { DeviceChoice, DtypeChoice } from '../../protocol/engine-api.ts';
import { BUNDLED_HOST_PARAM, bundledHost } from './bundled-model.ts';

const DEVICES: readonly DeviceChoice[] = ['webgpu', 'wasm', 'auto'];
const DTYPES: readonly DtypeChoice[] = ['fp32', 'fp16', 'q8', 'q4', 'q4f16', 'auto'];

export type PageParams = Required<Pick<ClientOptions, 'model' | 'host' | 'device' | 'dtype'>> & Pick<ClientOptions, 'ortBuild' | 'threads'>;

/**
 * The page's query parameters (CONTRACT §2): model, host, device, dtype. A relative `host` is
 * read against the page's address: `?model=TinyStories-656K&host=bundled` loads the model the app
 * serves itself (bundled-model.ts). Beyond the contract's four, `ortBuild=cpu|jspi|asyncify` forces
 * onnxruntime-web's wasm build (for measuring one against the other; docs/threads.md); absent, or
 * any other value, leaves the engine's measured default. `threads=N` (1–256) sets the wasm
 * threads (`createClient({ threads })`); absent or out of range, one per core.
 */
export function pageParams(search: string, pageHref: string = globalThis.location?.href ?? 'http://localhost/'): PageParams {
  const q = new URLSearchParams(search);
  const host = q.get('host') || DEFAULT_HOST;
  const device = q.get('device') as DeviceChoice | null;
  const dtype = q.get('dtype') as DtypeChoice | null;
  return {
    model: q.get('model') || DEFAULT_MODEL,
    host: (/^[a-z][a-z\d+.-]*:/i.test(host) ? host : new URL(host, pageHref).href).replace(/\/+$/, ''),
    device: device && DEVICES.includes(device) ? device : 'auto',
    dtype: dtype && DTYPES.includes(dtype) ? dtype : 'auto',
    ...ortBuildParam(q.get('ortBuild')),
    ...threadsParam(q.get('threads')),
  };
}

function threadsParam(value: string | null): Pick<ClientOptions, 'threads'> {
  const n = value !== null && /^\d{1,3}$/.test(value) ? Number(value) : 0;
  return n >= 1 && n <= 256 ? { threads: n } : {};
}

function ortBuildParam(value: string | null): Pick<ClientOptions, 'ortBuild'> {
  const build = parseOrtBuild(value);
  return build && build !== 'auto' ? { ortBuild: build } : {};
}

/**
 * The address with the model, device and dtype of a load written into it, so a reload opens the
 * same; and its host where one is given (the bundled model's as `host=bundled`, the default
 * host's as none). Anything else in the address stays as it was.
 */
export function withParams(href: string, target: Pick<PageParams, 'model' | 'device' | 'dtype'> & { host?: string }): string {
  const url = new URL(href);
  url.searchParams.set('model', target.model);
  if (target.host === bundledHost(href)) url.searchParams.set('host', BUNDLED_HOST_PARAM);
  else if (target.host === DEFAULT_HOST) url.searchParams.delete('host');
  else if (target.host) url.searchParams.set('host', target.host);
  for (const name of ['device', 'dtype'] as const) {
    if (target[name] === 'auto') url.searchParams.delete(name);
    else url.searchParams.set(name, target[name]);
  }
  return url.href;
}
