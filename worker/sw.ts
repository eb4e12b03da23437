/// <reference lib="webworker" />
// Entry of the service worker: the HTTP surface's relay first (it answers only the endpoints),
// then the precache of the app shell and onnxruntime-web's files. Wiring only.
import { clientsClaim } from 'workbox-core';
import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';
import { withIsolationHeaders } from '../src/http/isolation.ts';
import { isOtherBuildFile } from '../src/engine/runtime/ort-build.ts';
import { installServiceWorkerRelay } from '../src/http/sw-relay.ts';
import { routeBundledFiles } from './bundled-files.ts';

declare const self: ServiceWorkerGlobalScope & { __WB_MANIFEST: (string | { url: string; revision: string | null })[] };

installServiceWorkerRelay(self);
// Of onnxruntime-web's builds, only those this browser runs (ort-build.ts: the wasm-only one for wasm loads, its WebGPU one); the third is never fetched.
precacheAndRoute(self.__WB_MANIFEST.filter((entry) => !isOtherBuildFile(typeof entry === 'string' ? entry : entry.url)));
// The bundled model's files, GET and HEAD, from the precache (bundled-files.ts): it loads offline from the first visit.
routeBundledFiles(self.registration.scope);
cleanupOutdatedCaches();
// The page takes its settings from the query (?model=…&host=…): every navigation gets the shell,
// cross-origin isolated (wasm threads) also when it comes from the precache offline.
const shell = createHandlerBoundToURL('index.html');
registerRoute(new NavigationRoute(async (options) => withIsolationHeaders(await shell(options))));
clientsClaim();
// A new version waits until the page accepts it (the update flow), never half-old, half-new.
self.addEventListener('message', (event) => {
  if ((event.data as { type?: string } | null)?.type === 'SKIP_WAITING') void self.skipWaiting();
});
