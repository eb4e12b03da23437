import { join, resolve } from 'node:path';
import { build } from 'vite';

export const BENCH_DIR = resolve(import.meta.dirname, '..');
/** bench/dist, or `$JEV_BENCH_DIST` (relative to the repository): a run of its own beside another's. */
export const DIST = process.env['JEV_BENCH_DIST'] ? resolve(BENCH_DIR, '..', process.env['JEV_BENCH_DIST']) : join(BENCH_DIR, 'dist');

/** Builds bench/page into bench/dist with its own vite config (onnxruntime files self-hosted). */
export async function buildPage(): Promise<string> {
  await build({ configFile: join(BENCH_DIR, 'vite.config.ts'), logLevel: 'warn', build: { outDir: DIST } });
  return DIST;
}
