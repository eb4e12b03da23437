import { Workbox } from 'workbox-window';
import { installPageRelay } from '../http/page-relay.ts';
import type { JevClient } from '../facade/jev-client.ts';

export interface ServeHttpOptions {
  /** URL of the service worker script, served by the app at the scope it should control (default `/sw.js`). */
  serviceWorkerUrl?: string;
  /** Mounts the endpoints under this prefix (must match the client's `basePath`). */
  basePath?: string;
  scope?: string;
  /**
   * A new version of the app was installed and waits. Call `apply` to switch (the page reloads
   * once the new service worker controls it): never a half-old, half-new app.
   */
  onUpdate?: (apply: () => void) => void;
}

/**
 * Serves the HTTP paths of the specification on this page's own origin: registers the service
 * worker that relays those requests to this page, where `client.fetch` answers them. Resolves
 * once the service worker controls the page, so `fetch('/v1/chat/completions', …)` works.
 * Also asks the browser to keep this origin's storage (the cached model) durable.
 */
export async function serveHttp(client: Pick<JevClient, 'fetch'>, options: ServeHttpOptions = {}): Promise<ServiceWorkerRegistration> {
  const container = navigator.serviceWorker;
  if (!container) throw new Error('Service workers are unavailable here (they need a secure origin: https or localhost); use client.fetch instead.');
  installPageRelay(container, client.fetch);
  void navigator.storage?.persist?.().catch(() => false);
  const url = new URL(options.serviceWorkerUrl ?? '/sw.js', location.href);
  if (options.basePath) url.searchParams.set('base', options.basePath);
  const workbox = new Workbox(url.href, {
    type: import.meta.env?.DEV ? 'module' : 'classic',
    ...(options.scope ? { scope: options.scope } : {}),
  });
  workbox.addEventListener('waiting', () => {
    options.onUpdate?.(() => {
      workbox.addEventListener('controlling', () => location.reload());
      workbox.messageSkipWaiting();
    });
  });
  const registration = await workbox.register();
  if (!registration) throw new Error(`The service worker ${url.href} could not be registered.`);
  if (!container.controller) {
    await new Promise<void>((resolve) => container.addEventListener('controllerchange', () => resolve(), { once: true }));
  }
  return registration;
}
