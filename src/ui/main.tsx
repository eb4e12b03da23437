// Entry of the playground: builds the client from the page's parameters, exposes it as
// `window.jev`, serves the HTTP surface on this origin, and mounts the UI. Nothing else.
import { signal } from '@preact/signals';
import { render } from 'preact';
import { createClient } from '../client/create-client.ts';
import { serveHttp } from '../client/serve-http.ts';
import type { JevClient } from '../facade/jev-client.ts';
import { App } from './app.tsx';
import { createChatStore } from './chat/chat-store.ts';
import { pageParams, withParams } from './model/page-params.ts';
import { createDecisionDraft } from './state/decision-draft.ts';
import { createEngineState } from './state/engine-state.ts';
import { createLoadProgress } from './state/load-progress.ts';
import { createSavedProfiles } from './state/saved-profiles.ts';

declare global {
  interface Window {
    jev: JevClient;
  }
}

const params = pageParams(location.search);
const progress = createLoadProgress();
const client = createClient({ ...params, onProgress: (e) => progress.push(e) });
window.jev = client;
const engine = createEngineState(client, params, progress, (target) => history.replaceState(history.state, '', withParams(location.href, target)));
// Calibration profiles saved in this browser, restored into the client before any request names one.
const profiles = createSavedProfiles(client);
const update = signal<(() => void) | null>(null);
// The HTTP surface on this origin (CONTRACT §3): the service worker relays to this page's engine.
// It also precaches the app for offline use; a new version waits until the user applies it
// (the banner's button; the `jev-update` event carries the same function for other listeners).
void serveHttp(client, {
  serviceWorkerUrl: `${import.meta.env.BASE_URL}sw.js`,
  onUpdate: (apply) => {
    update.value = apply;
    window.dispatchEvent(new CustomEvent('jev-update', { detail: apply }));
  },
}).catch((e) => console.warn('HTTP surface unavailable:', e));

render(
  <App client={client} engine={engine} progress={progress} decision={createDecisionDraft()} chat={createChatStore()} profiles={profiles} update={update} />,
  document.getElementById('app')!,
);
