/**
 * The peers page: built into bench/peers/dist, and served cross-origin isolated (COOP + COEP, so
 * SharedArrayBuffer and wasm threads work for both onnxruntime-web and wllama) with the model
 * folders under /models/<name>/<file>, same-origin (the engine's page passes localModelPath
 * '/models/', which a browser reads as a host: src/engine/load/runtime-env.ts; wllama gets the
 * GGUF by URL).
 */
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { startStatic, type StaticServer } from '../../e2e/support/static-server.ts';

export const PEERS_DIR = import.meta.dirname;
import { MODEL_ROOTS, REPO as ROOT } from '../../scripts/models/roots.ts';
/** bench/peers/dist, or `$JEV_PEERS_DIST` (relative to the repository): a run of its own beside another's. */
export const PEERS_DIST = process.env['JEV_PEERS_DIST'] ? resolve(ROOT, process.env['JEV_PEERS_DIST']) : join(PEERS_DIR, 'dist');

export { MODEL_ROOTS, REPO } from '../../scripts/models/roots.ts';

/**
 * Builds bench/peers/page into `outDir` (bench/peers/dist by default; onnxruntime-web and wllama
 * runtime files self-hosted). Two processes must not build into, or serve, the same folder at once:
 * a build rewrites it under a page still loading from it, which then never starts.
 */
export async function buildPeersPage(outDir = PEERS_DIST): Promise<string> {
  await build({ configFile: join(PEERS_DIR, 'vite.config.ts'), logLevel: 'warn', build: { outDir } });
  return outDir;
}

/** Serves `dist` at / and the model roots at /models/. Port 0 picks a free one. */
export function servePeers(dist = PEERS_DIST, roots: readonly string[] = MODEL_ROOTS, port = 0): Promise<StaticServer> {
  return startStatic(dist, port, {}, { '/models/': roots });
}
