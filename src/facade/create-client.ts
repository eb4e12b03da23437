import * as Comlink from 'comlink';
import type { DeviceChoice, DtypeChoice, EngineApi, LoadEvent } from '../protocol/engine-api.ts';
import { installErrorTransfer } from '../protocol/comlink-errors.ts';
import { clientForEngine } from './engine-client.ts';
import type { JevClient } from './jev-client.ts';
import { DEFAULT_HOST, DEFAULT_MODEL } from './defaults.ts';

export interface ClientOptions {
  /** Model id under `host`, in the Hugging Face layout. */
  model?: string;
  /** Base URL of model files: `{host}/{model}/resolve/main/{file}`. */
  host?: string;
  device?: DeviceChoice;
  dtype?: DtypeChoice;
  /** Load progress: bytes per file, fallbacks, ready. */
  onProgress?: (event: LoadEvent) => void;
  /** When set, HTTP requests (client.fetch, the service worker) must carry `Bearer <apiKey>`. */
  apiKey?: string;
  /** Mounts the HTTP endpoints under this prefix (e.g. `/jev`), clear of the app's own routes. */
  basePath?: string;
}

/**
 * Starts the engine in a Web Worker, loads the model, and returns the client. Calls made before
 * the model is ready wait for it.
 */
export function createClient(options: ClientOptions = {}): JevClient {
  installErrorTransfer();
  const worker = new Worker(new URL('../../worker/engine.worker.ts', import.meta.url), { type: 'module', name: 'jev-engine' });
  const api = Comlink.wrap<EngineApi>(worker) as unknown as EngineApi;
  return clientForEngine(
    {
      api,
      wrapCallback: (fn) => Comlink.proxy(fn),
      terminate: () => worker.terminate(),
    },
    {
      model: options.model ?? DEFAULT_MODEL,
      host: options.host ?? DEFAULT_HOST,
      device: options.device ?? 'auto',
      dtype: options.dtype ?? 'auto',
    },
    options.onProgress,
    { apiKey: options.apiKey, basePath: options.basePath },
  );
}
