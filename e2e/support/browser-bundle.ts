import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { build } from 'vite';
import { REPO } from './env.ts';

/**
 * Where the browser bundle of `entry` (a file under the repository) lies, in a folder named by
 * the entry's content, so a bundle of an older version of the entry is never reused.
 */
export function bundlePath(entry: string): string {
  const file = resolve(REPO, entry);
  const key = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12);
  return resolve(REPO, 'node_modules/.cache/jev-e2e', key, basename(entry).replace(/\.ts$/, '.js'));
}

/** Bundles `entry` for the browser as one script that sets `globalThis[name]`, once; its path. */
export async function browserBundle(entry: string, name: string): Promise<string> {
  const bundle = bundlePath(entry);
  if (existsSync(bundle)) return bundle;
  const dir = resolve(bundle, '..');
  mkdirSync(dir, { recursive: true });
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: dir,
      emptyOutDir: true,
      lib: { entry: resolve(REPO, entry), formats: ['iife'], name, fileName: () => basename(bundle) },
      minify: false,
    },
  });
  return bundle;
}
