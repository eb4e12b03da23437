// Entry of the playground: builds the client from the page's parameters, exposes it as
// `window.jev`, and mounts the UI. Nothing else happens here.
import { render } from 'preact';
import { createClient } from '../facade/create-client.ts';
import type { JevClient } from '../facade/jev-client.ts';
import { App } from './app.tsx';
import { createChatStore } from './chat-store.ts';
import { createDecisionDraft } from './decision-draft.ts';
import { createEngineState } from './engine-state.ts';
import { createLoadProgress } from './load-progress.ts';
import { pageParams, withParams } from './page-params.ts';

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

render(
  <App client={client} engine={engine} progress={progress} decision={createDecisionDraft()} chat={createChatStore()} />,
  document.getElementById('app')!,
);
