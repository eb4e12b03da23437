import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'vite';
import { REPO } from './env.ts';

export const CLIENT_BUNDLE = resolve(REPO, 'node_modules/.cache/jev-e2e/http-clients.js');

/** Bundles the `openai` client and the AI SDK for the browser, once, so tests can add them to a page. */
export async function buildClientBundle(): Promise<string> {
  if (existsSync(CLIENT_BUNDLE)) return CLIENT_BUNDLE;
  mkdirSync(resolve(CLIENT_BUNDLE, '..'), { recursive: true });
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: resolve(CLIENT_BUNDLE, '..'),
      emptyOutDir: true,
      lib: { entry: resolve(REPO, 'e2e/fixtures/http-clients.ts'), formats: ['iife'], name: 'httpClients', fileName: () => 'http-clients.js' },
      minify: false,
    },
  });
  return CLIENT_BUNDLE;
}
