import { browserBundle } from './browser-bundle.ts';

/** Bundles the AI SDK's functions (and zod) for the browser, once, so a test can add them to a page as `globalThis.aiSdk`. */
export function aiSdkBundle(): Promise<string> {
  return browserBundle('e2e/fixtures/ai-sdk-functions.ts', 'aiSdkFunctions');
}
