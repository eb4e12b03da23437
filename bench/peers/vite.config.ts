import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { type Plugin, defineConfig } from 'vite';
import { ortUrlRewrite } from '../../build/ort-files.ts';
import { ORT_FILES } from '../../src/engine/runtime/ort-build.ts';

const require = createRequire(import.meta.url);

/**
 * Self-hosts the runtimes' binary files so a run fetches nothing from a CDN:
 *   ort/    onnxruntime-web's wasm builds (asyncify — what the engine ships —, plain and jspi, so the
 *           profile can compare them), and the engine's two under the names it ships them by
 *           (src/engine/runtime/ort-build.ts ORT_FILES: the revision in the name)
 *   wllama/ wllama's single wasm build (it runs single- or multi-threaded at load time)
 */
function runtimeFiles(): Plugin {
  const ortDist = dirname(require.resolve('onnxruntime-web'));
  const wllamaWasm = resolve(dirname(require.resolve('@wllama/wllama/package.json')), 'esm/wasm/wllama.wasm');
  const ort = ['', '.asyncify', '.jspi'].flatMap((v) => [`ort-wasm-simd-threaded${v}.mjs`, `ort-wasm-simd-threaded${v}.wasm`]);
  return {
    name: 'jev-peers-runtime-files',
    generateBundle() {
      for (const f of ort) this.emitFile({ type: 'asset', fileName: `ort/${f}`, source: readFileSync(join(ortDist, f)) });
      for (const { name, source } of ORT_FILES) this.emitFile({ type: 'asset', fileName: `ort/${name}`, source: readFileSync(join(ortDist, source)) });
      this.emitFile({ type: 'asset', fileName: 'wllama/wllama.wasm', source: readFileSync(wllamaWasm) });
    },
  };
}

/** The peers page: bench/peers/page → bench/peers/dist. */
export default defineConfig({
  root: resolve(import.meta.dirname, 'page'),
  base: '/',
  logLevel: 'warn',
  plugins: [runtimeFiles(), ortUrlRewrite()],
  worker: { format: 'es' },
  build: {
    outDir: resolve(import.meta.dirname, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 16384,
    minify: false,
  },
});
