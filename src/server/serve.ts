import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalClient } from '../client/local-client.ts';
import type { JevClient } from '../facade/jev-client.ts';
import { createHttpHandler } from '../http/http-handler.ts';
import type { ServingBackend } from './backend.ts';
import type { ServeOptions } from './cli-args.ts';
import { nodeHandler } from './node-adapter.ts';
import { RemoteEngine, type RemoteEngineOptions } from './remote-engine.ts';
import { SglangBackend } from './sglang-backend.ts';
import { VllmBackend } from './vllm-backend.ts';

export interface RunningServer {
  /** `http://{bind}:{port}`: the `baseURL` of `createClient`/`createRemoteClient`. */
  url: string;
  port: number;
  client: JevClient;
  backend: ServingBackend;
  close(): Promise<void>;
}

export interface ServeDeps {
  /** The fetch the backend is reached with (tests). */
  fetch?: typeof fetch;
  loadModel?: RemoteEngineOptions['loadModel'];
}

/** The backend `options.backend` names. */
export function createBackend(options: Pick<ServeOptions, 'backend' | 'backendUrl' | 'timeoutMs' | 'backendModel'>, deps: ServeDeps = {}): ServingBackend {
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

/**
 * Starts the server: the facade's client over a RemoteEngine (the same validation, limits, profile
 * resolution and errors as the page), the page's HTTP handler, node:http in front. Resolves once
 * the model's tokenizer is loaded and agrees with the backend's, and the port listens; rejects
 * (with the load's JevError) otherwise, listening on nothing.
 */
export async function startServer(options: ServeOptions, deps: ServeDeps = {}): Promise<RunningServer> {
  const backend = createBackend(options, deps);
  const engine = new RemoteEngine({ backend, backendModel: options.backendModel, ...(deps.loadModel ? { loadModel: deps.loadModel } : {}) });
  const http = { apiKey: options.apiKey };
  const client = createLocalClient(engine, { model: options.model, host: options.host, device: 'auto', dtype: 'auto' }, http);
  await client.ready;
  const handler = createHttpHandler(client, http);
  const server: Server = createServer();
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.bind, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await listening;
  const port = (server.address() as AddressInfo).port;
  const host = options.bind.includes(':') ? `[${options.bind}]` : options.bind;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  server.on('request', nodeHandler((request) => handler.respond(request), url));
  return {
    url,
    port,
    client,
    backend,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
