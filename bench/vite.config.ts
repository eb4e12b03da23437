import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { type Plugin, defineConfig } from 'vite';
import { ortFiles } from '../build/ort-files.ts';

/** wllama's wasm build under wllama/, for the `load_visits` rows' peer page (page/wllama-load.ts). */
function wllamaFiles(): Plugin {
  const wasm = resolve(dirname(createRequire(import.meta.url).resolve('@wllama/wllama/package.json')), 'esm/wasm/wllama.wasm');
  return {
    name: 'jev-bench-wllama-files',
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: 'wllama/wllama.wasm', source: readFileSync(wasm) });
    },
  };
}

/**
 * The bench page: bench/page → bench/dist, with onnxruntime-web's runtime files self-hosted
 * under ort/ (the same plugin the app uses) and wllama's under wllama/, so a run fetches nothing from a CDN.
 */
export default defineConfig({
  root: resolve(import.meta.dirname, 'page'),
  base: '/',
  logLevel: 'warn',
  plugins: [ortFiles(), wllamaFiles()],
  worker: { format: 'es' },
  build: {
    outDir: resolve(import.meta.dirname, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 8192,
    // Minified, as an app ships the engine's worker (the playground's build is): the load rows time
    // an app's start-up, and the worker's script (0.9 MB minified, 1.9 MB not) is parsed in full on
    // every visit (docs/benchmarks.md, "What a new renderer still compiles").
    minify: true,
    // The bench page, a tab of the library's client and a tab without it (the `tabs` rows), an app's start-up (the `load_visits` rows), and wllama's and transformers.js' pipeline's in its place.
    rollupOptions: {
      input: {
        main: resolve(import.meta.dirname, 'page/index.html'),
        tabs: resolve(import.meta.dirname, 'page/tabs.html'),
        blank: resolve(import.meta.dirname, 'page/blank.html'),
        load: resolve(import.meta.dirname, 'page/load.html'),
        'wllama-load': resolve(import.meta.dirname, 'page/wllama-load.html'),
        'pipeline-load': resolve(import.meta.dirname, 'page/pipeline-load.html'),
      },
    },
  },
});
