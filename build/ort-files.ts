import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Plugin } from 'vite';
import { ORT_FILES } from '../src/engine/runtime/ort-build.ts';

// Every build the engine may choose (src/engine/runtime/ort-build.ts): the browser picks one at run time.
// Shipped under names that carry their revision (ORT_REVISION): copies of onnxruntime-web's own
// files, or, from a built package's ort/ folder, of the files it ships under those names already.
const fromPackage = new Map(ORT_FILES.map((f) => [f.name, f.source]));
const fromShipped = new Map(ORT_FILES.map((f) => [f.name, f.name]));

/**
 * Self-hosts onnxruntime-web's runtime files under `ort/`, so that nothing is fetched from a
 * CDN: emitted into the build, and served by the dev server from node_modules.
 */
export function ortFiles(sourceDir?: string): Plugin {
  // By default onnxruntime-web's own dist/ folder (its main entry lives there, beside the files).
  const dist = sourceDir ?? dirname(createRequire(import.meta.url).resolve('onnxruntime-web'));
  const sources = sourceDir ? fromShipped : fromPackage;
  return {
    name: 'jev-ort-files',
    generateBundle() {
      for (const [name, source] of sources) this.emitFile({ type: 'asset', fileName: `ort/${name}`, source: readFileSync(join(dist, source)) });
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const name = req.url?.split('?')[0]?.replace(/^.*\/ort\//, '');
        const source = name ? sources.get(name) : undefined;
        if (!req.url?.includes('/ort/') || !source) return next();
        res.setHeader('Content-Type', source.endsWith('.wasm') ? 'application/wasm' : 'text/javascript');
        res.end(readFileSync(join(dist, source)));
      });
    },
  };
}

/**
 * onnxruntime-web's bundle names its .wasm with `new URL("…wasm", import.meta.url)`, a fallback
 * for when `wasmPaths` is unset. Bundlers copy (or, in library mode, inline as base64) what that
 * names; the engine always sets wasmPaths to ort/, so the reference is rewritten to one they leave alone.
 */
export function ortUrlRewrite(): Plugin {
  const pattern = /new URL\("(ort-wasm-simd-threaded[^"]*\.wasm)",import\.meta\.url\)/g;
  return {
    name: 'jev-ort-url-rewrite',
    transform(code, id) {
      if (!id.includes('onnxruntime-web') || !pattern.test(code)) return null;
      return { code: code.replace(pattern, 'new URL("$1",self.location.href)'), map: null };
    },
  };
}
