import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientForEngine } from '../client/client-for-engine.ts';
import type { JevClient } from '../facade/jev-client.ts';
import { createHttpHandler } from '../http/http-handler.ts';
import type { EngineApi, LoadEvent } from '../protocol/engine-api.ts';
import type { EngineBinding } from '../facade/engine-client.ts';
import type { HangWatchdogOptions } from '../facade/hang-watchdog.ts';
import type { ServingBackend } from './backend.ts';
import type { BackendKind, ServeOptions } from './cli-args.ts';
import { capConnections, CONNECTION_DEFAULTS, serverOptions, type ConnectionLimits } from './connection-limits.ts';
import { checkEmbeddedRuntime, embeddedEngine } from './embedded-engine.ts';
import { downloadModel } from './model-download.ts';
import { modelLocation } from './model-location.ts';
import { nodeHandler, writeJson } from './node-adapter.ts';
import { RemoteEngine, type RemoteEngineOptions } from './remote-engine.ts';
import { isLoopback, isPreflight, RequestGuard } from './request-guard.ts';
import { SglangBackend } from './sglang-backend.ts';
import { VllmBackend } from './vllm-backend.ts';

export interface RunningServer {
  /** `http://{bind}:{port}`: the `baseURL` of `createClient`/`createRemoteClient`. */
  url: string;
  port: number;
  client: JevClient;
  /** The serving engine behind a relay; null for the engine in-process. */
  backend: ServingBackend | null;
  /** The engine the client stands over (RemoteEngine, or the page's Engine in-process). */
  engine: EngineApi;
  /** Connections closed by the cap so far (connection-limits.ts). */
  evictedConnections(): number;
  close(): Promise<void>;
}

export interface ServeDeps {
  /** The fetch the backend is reached with (tests). */
  fetch?: typeof fetch;
  loadModel?: RemoteEngineOptions['loadModel'];
  /** The connection timeouts (tests shorten them); `maxConnections` comes from the options. */
  connections?: Partial<Omit<ConnectionLimits, 'maxConnections'>>;
  /** Load progress (default: lines on stderr, load-progress.ts, from main). */
  onProgress?: (event: LoadEvent) => void;
  /** Warnings at start (default: console.error). */
  warn?: (message: string) => void;
  /** The embedded engine's prefix cache budget (tests). */
  prefixCacheBytes?: number;
  /** The embedded engine's hang watchdog (tests shorten it; default: the page's). */
  hang?: HangWatchdogOptions;
}

/** The backend `options.backend` names. */
export function createBackend(
  options: { backend: BackendKind; backendUrl: string } & Pick<ServeOptions, 'timeoutMs' | 'backendModel'>,
  deps: ServeDeps = {},
): ServingBackend {
  const http = { url: options.backendUrl, timeoutMs: options.timeoutMs, ...(deps.fetch ? { fetch: deps.fetch } : {}) };
  switch (options.backend) {
    case 'sglang':
      return new SglangBackend(http, options.backendModel);
    case 'vllm':
      return new VllmBackend(http, options.backendModel);
    default: {
      const never: never = options.backend;
      throw new Error(`unknown backend ${String(never)}`);
    }
  }
}

/** The warning for a server that listens beyond loopback with no key, naming the risk; null where there is none. */
export function exposureWarning(options: Pick<ServeOptions, 'bind' | 'apiKey'>): string | null {
  if (options.apiKey !== undefined || isLoopback(options.bind)) return null;
  return (
    `jev-local serve: WARNING: listening on ${options.bind} without --api-key: anyone who can reach this address ` +
    `can run the model (every request costs this machine's CPU) and read its answers. Set --api-key, or bind 127.0.0.1.`
  );
}

/**
 * Starts the server: the facade's client over an engine — the page's Engine in this process
 * (embedded-engine.ts), or a RemoteEngine over SGLang or vLLM — with the same validation, limits,
 * queue and errors as the page, the page's HTTP handler, and node:http in front behind the
 * request guard (request-guard.ts) and the connection limits (connection-limits.ts). Resolves
 * once the model is loaded and the port listens; rejects (with the load's JevError) otherwise,
 * listening on nothing.
 */
export async function startServer(options: ServeOptions, deps: ServeDeps = {}): Promise<RunningServer> {
  const location = modelLocation(options.model, options.host);
  let backend: ServingBackend | null = null;
  let binding: EngineBinding;
  let dtype = options.dtype;
  let host = location.kind === 'folder' ? location.root : location.host;
  if (options.backend) {
    backend = createBackend({ ...options, backend: options.backend, backendUrl: options.backendUrl ?? '' }, deps);
    const remote = new RemoteEngine({ backend, backendModel: options.backendModel, ...(deps.loadModel ? { loadModel: deps.loadModel } : {}) });
    binding = { api: remote, wrapCallback: (fn) => fn, terminate: () => {} };
    dtype = 'auto';
  } else {
    // Before an HTTP host's download: a runtime or provider that is missing is refused first.
    checkEmbeddedRuntime(options.device);
    let root = location.kind === 'folder' ? location.root : null;
    if (location.kind === 'http') {
      // An HTTP host's files, checked and stored under --cache-dir, become a local folder first.
      const downloaded = await downloadModel(options.model, location.host, options.dtype, options.cacheDir, deps.onProgress);
      root = downloaded.root;
      dtype = downloaded.dtype;
    }
    binding = embeddedEngine({
      model: options.model,
      root: root!,
      host: location.host,
      device: options.device,
      threads: options.threads,
      ...(deps.prefixCacheBytes === undefined ? {} : { prefixCacheBytes: deps.prefixCacheBytes }),
      ...(deps.hang ? { hang: deps.hang } : {}),
    });
    host = location.host;
  }
  const engine: EngineApi = binding.api;
  const client = clientForEngine(
    binding,
    { model: options.model, host, device: 'auto', dtype },
    deps.onProgress,
    {},
    { maxQueued: options.maxQueued },
  );
  try {
    await client.ready;
  } catch (e) {
    client.terminate();
    throw e;
  }
  // The key is the guard's (constant time); the handler serves behind it.
  const handler = createHttpHandler(client, {});
  const guard = new RequestGuard({
    bind: options.bind,
    allowedHosts: options.allowedHosts,
    corsOrigins: options.corsOrigins,
    apiKey: options.apiKey,
    serves: (url) => handler.matches(url),
  });
  const limits: ConnectionLimits = { ...CONNECTION_DEFAULTS, ...deps.connections, maxConnections: options.maxConnections };
  const server: Server = createServer(serverOptions(limits));
  const cap = capConnections(server, limits.maxConnections);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const bound = options.bind.includes(':') && !options.bind.startsWith('[') ? `[${options.bind}]` : options.bind;
  const url = `http://${bound === '0.0.0.0' ? '127.0.0.1' : bound === '[::]' ? '[::1]' : bound}:${port}`;
  const serve = nodeHandler((request) => handler.respond(request), url);
  server.on('request', (req, res) => {
    const verdict = guard.check(req);
    for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
    if (verdict.reply) {
      // Refused before any work: the body, if any, is not read; the connection closes after the answer.
      res.setHeader('connection', 'close');
      writeJson(verdict.reply, res);
      return;
    }
    if (isPreflight(verdict)) {
      res.writeHead(204, { 'content-length': '0' }).end();
      return;
    }
    serve(req, res);
  });
  const warning = exposureWarning(options);
  if (warning) (deps.warn ?? console.error)(warning);
  return {
    url,
    port,
    client,
    backend,
    engine,
    evictedConnections: cap.evicted,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        // The engine's thread (in-process) stops with the server.
        client.terminate();
      }),
  };
}
