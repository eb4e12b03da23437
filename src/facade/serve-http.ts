import { installPageRelay } from '../http/page-relay.ts';
import type { JevClient } from './jev-client.ts';

export interface ServeHttpOptions {
  /** URL of the service worker script, served by the app at the scope it should control (default `/sw.js`). */
  serviceWorkerUrl?: string;
  /** Mounts the endpoints under this prefix (must match the client's `basePath`). */
  basePath?: string;
  scope?: string;
}

/**
 * Serves the HTTP paths of the specification on this page's own origin: registers the service
 * worker that relays those requests to this page, where `client.fetch` answers them. Resolves
 * once the service worker controls the page, so `fetch('/v1/chat/completions', …)` works.
 */
export async function serveHttp(client: Pick<JevClient, 'fetch'>, options: ServeHttpOptions = {}): Promise<ServiceWorkerRegistration> {
  const container = navigator.serviceWorker;
  if (!container) throw new Error('Service workers are unavailable here (they need a secure origin: https or localhost); use client.fetch instead.');
  installPageRelay(container, client.fetch);
  const url = new URL(options.serviceWorkerUrl ?? '/sw.js', location.href);
  if (options.basePath) url.searchParams.set('base', options.basePath);
  const registration = await container.register(url.href, {
    type: import.meta.env?.DEV ? 'module' : 'classic',
    ...(options.scope ? { scope: options.scope } : {}),
  });
  if (!container.controller) {
    await new Promise<void>((resolve) => container.addEventListener('controllerchange', () => resolve(), { once: true }));
  }
  return registration;
}
