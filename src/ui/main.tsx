// Entry of the playground: creates the client from the page's parameters and mounts the UI.
import { render } from 'preact';
import { createClient } from '../facade/create-client.ts';
import { serveHttp } from '../facade/serve-http.ts';
import type { LoadEvent } from '../protocol/engine-api.ts';
import { App } from './app.tsx';
import { pageParams } from './page-params.ts';
import { createLoadProgress } from './load-progress.ts';

const params = pageParams(location.search);
const progress = createLoadProgress();
const client = createClient({ ...params, onProgress: (e: LoadEvent) => progress.push(e) });
(window as unknown as { jev: typeof client }).jev = client;
// The HTTP surface on this origin (CONTRACT §3), relayed by the service worker to this page.
void serveHttp(client, { serviceWorkerUrl: `${import.meta.env.BASE_URL}sw.js` }).catch((e) => console.warn('HTTP surface unavailable:', e));
render(<App client={client} params={params} progress={progress} />, document.getElementById('app')!);
