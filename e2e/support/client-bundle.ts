import { browserBundle, bundlePath } from './browser-bundle.ts';

const ENTRY = 'e2e/fixtures/http-clients.ts';
/** The `openai` client and the AI SDK for the browser (e2e/fixtures/http-clients.ts), built by global-setup.ts. */
export const CLIENT_BUNDLE = bundlePath(ENTRY);

/** Bundles the `openai` client and the AI SDK for the browser, once, so tests can add them to a page. */
export function buildClientBundle(): Promise<string> {
  return browserBundle(ENTRY, 'httpClients');
}
