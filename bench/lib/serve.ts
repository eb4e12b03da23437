import { join, resolve } from 'node:path';
import { build } from 'vite';

export const BENCH_DIR = resolve(import.meta.dirname, '..');
export const DIST = join(BENCH_DIR, 'dist');

/** Builds bench/page into bench/dist with its own vite config (onnxruntime files self-hosted). */
export async function buildPage(): Promise<string> {
  await build({ configFile: join(BENCH_DIR, 'vite.config.ts'), logLevel: 'warn' });
  return DIST;
}
