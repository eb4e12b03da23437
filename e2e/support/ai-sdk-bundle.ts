import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { build } from 'vite';
import { REPO } from './env.ts';

const ENTRY = resolve(REPO, 'e2e/fixtures/ai-sdk-functions.ts');
/** Named by the entry's content, so a bundle of an older list of functions is never reused. */
const KEY = createHash('sha256').update(readFileSync(ENTRY)).digest('hex').slice(0, 12);
const DIR = resolve(REPO, 'node_modules/.cache/jev-e2e-ai-sdk', KEY);
const BUNDLE = resolve(DIR, 'ai-sdk-functions.js');

/** Bundles the AI SDK's functions (and zod) for the browser, once, so a test can add them to a page as `globalThis.aiSdk`. */
export async function aiSdkBundle(): Promise<string> {
  if (existsSync(BUNDLE)) return BUNDLE;
  mkdirSync(DIR, { recursive: true });
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: DIR,
      emptyOutDir: true,
      lib: { entry: ENTRY, formats: ['iife'], name: 'aiSdkFunctions', fileName: () => 'ai-sdk-functions.js' },
      minify: false,
    },
  });
  return BUNDLE;
}
