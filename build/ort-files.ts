import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';

const FILES = ['ort-wasm-simd-threaded.asyncify.mjs', 'ort-wasm-simd-threaded.asyncify.wasm'];

/**
 * Self-hosts onnxruntime-web's runtime files under `ort/`, so that nothing is fetched from a
 * CDN: emitted into the build, and served by the dev server from node_modules.
 */
export function ortFiles(): Plugin {
  const require = createRequire(import.meta.url);
  // The package's main entry lives in its dist/ folder, beside the runtime files.
  const dist = dirname(require.resolve('onnxruntime-web'));
  return {
    name: 'jev-ort-files',
    generateBundle(_options, bundle) {
      // onnxruntime-web's bundle names its .wasm with `new URL(…, import.meta.url)`, so Vite copies
      // it into assets/ too; the engine sets wasmPaths to ort/, so that copy is never read: drop it.
      for (const key of Object.keys(bundle)) if (/(^|\/)assets\/ort-wasm[^/]*\.wasm$/.test(key)) delete bundle[key];
      for (const file of FILES) this.emitFile({ type: 'asset', fileName: `ort/${file}`, source: readFileSync(join(dist, file)) });
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const name = req.url?.split('?')[0]?.replace(/^.*\/ort\//, '');
        if (!req.url?.includes('/ort/') || !name || !FILES.includes(name)) return next();
        res.setHeader('Content-Type', name.endsWith('.wasm') ? 'application/wasm' : 'text/javascript');
        res.end(readFileSync(join(dist, name)));
      });
    },
  };
}
