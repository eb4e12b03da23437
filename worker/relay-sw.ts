/// <reference lib="webworker" />
// The service worker shipped with the library (`jev-local/sw`, dist/lib/jev-sw.js) for apps that
// embed the engine: only the HTTP surface's relay (no precache: the app owns its own caching).
// Register it with serveHttp(client, { serviceWorkerUrl }). Wiring only.
import { installServiceWorkerRelay } from '../src/http/sw-relay.ts';

declare const self: ServiceWorkerGlobalScope;

installServiceWorkerRelay(self);
self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
