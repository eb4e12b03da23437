/**
 * A server (src/server/) in front of a loopback SGLang or vLLM, both on 127.0.0.1, over one real
 * model: the loopback's engine is also the in-process reference the server's answers are held to.
 */
import type { BackendKind, ServeOptions } from '../../../src/server/cli-args.ts';
import type { ServingBackend } from '../../../src/server/backend.ts';
import { startServer, type RunningServer } from '../../../src/server/serve.ts';
import { SERVE_DEFAULTS } from '../../../src/server/cli-args.ts';
import { GENERATED } from '../../support/models.ts';
import { loopbackModel, type LoopbackModel } from './loopback-model.ts';
import { sglangLoopback, type EngineLoopback } from './sglang-loopback.ts';
import { vllmLoopback } from './vllm-loopback.ts';

export interface Served {
  loopback: EngineLoopback;
  /** A relay: its backend is always there. */
  server: RunningServer & { backend: ServingBackend };
  model: LoopbackModel;
  close(): Promise<void>;
}

const models = new Map<string, Promise<LoopbackModel>>();

/** The loopback model of `id` (loaded once per test file). */
export function sharedModel(id: string): Promise<LoopbackModel> {
  let m = models.get(id);
  if (!m) models.set(id, (m = loopbackModel(GENERATED, id)));
  return m;
}

export async function startLoopback(kind: BackendKind, model: LoopbackModel): Promise<EngineLoopback> {
  return kind === 'sglang' ? sglangLoopback(model) : vllmLoopback(model);
}

export function serveOptions(kind: BackendKind, url: string, model: string, extra: Partial<ServeOptions> = {}): ServeOptions {
  return {
    ...embeddedOptions(model),
    backend: kind,
    backendUrl: url,
    host: GENERATED,
    timeoutMs: 10_000,
    ...extra,
  };
}

/** The options of a server with the engine in-process, on `model` from `host` (default: the generated models' folder), on an ephemeral port. */
export function embeddedOptions(model: string, extra: Partial<ServeOptions> = {}): ServeOptions {
  return {
    backend: null,
    backendUrl: null,
    model,
    host: GENERATED,
    backendModel: model,
    port: 0,
    bind: '127.0.0.1',
    apiKey: undefined,
    timeoutMs: SERVE_DEFAULTS.timeoutMs,
    device: 'cpu',
    threads: null,
    dtype: 'fp32',
    cacheDir: '/nonexistent/jev-local-cache',
    allowedHosts: [],
    corsOrigins: [],
    maxConnections: SERVE_DEFAULTS.maxConnections,
    maxQueued: SERVE_DEFAULTS.maxQueued,
    ...extra,
  };
}

export async function served(kind: BackendKind, id: string, extra: Partial<ServeOptions> = {}): Promise<Served> {
  const model = await sharedModel(id);
  const loopback = await startLoopback(kind, model);
  const server = (await startServer(serveOptions(kind, loopback.url, id, extra))) as Served['server'];
  return {
    loopback,
    server,
    model,
    close: async () => {
      await server.close();
      await loopback.close();
    },
  };
}

/** POSTs JSON to the server. */
export async function post(server: { url: string }, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

let calls = 0;
export const call = () => ({ id: `ref-${++calls}` });
