import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'vite';
import { REPO } from './env.ts';

const ENTRY = resolve(REPO, 'e2e/fixtures/http-clients.ts');
/** Named by the entry's content, so a bundle built from an older list of clients is never reused. */
const KEY = createHash('sha256').update(readFileSync(ENTRY)).digest('hex').slice(0, 12);
const DIR = resolve(REPO, 'node_modules/.cache/jev-e2e', KEY);
export const CLIENT_BUNDLE = resolve(DIR, 'http-clients.js');

/** Bundles the `openai` client and the AI SDK for the browser, once, so tests can add them to a page. */
export async function buildClientBundle(): Promise<string> {
  if (existsSync(CLIENT_BUNDLE)) return CLIENT_BUNDLE;
  mkdirSync(DIR, { recursive: true });
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: DIR,
      emptyOutDir: true,
      lib: { entry: ENTRY, formats: ['iife'], name: 'httpClients', fileName: () => 'http-clients.js' },
      minify: false,
    },
  });
  return CLIENT_BUNDLE;
}
