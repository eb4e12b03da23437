import { defineConfig, type Plugin } from 'vite';
import { ortFiles, ortUrlRewrite } from './build/ort-files.ts';

/**
 * The library build: an ES module (`dist/lib/index.js`) with the engine's worker bundled beside
 * it and onnxruntime-web's files under `dist/lib/ort/`; the AI SDK provider (`dist/lib/ai-sdk.js`,
 * `jev-local/ai-sdk`), which imports nothing of the AI SDK at run time (its types only).
 */
/**
 * Library mode writes the worker's URL as a root path ("/assets/…" against "" + import.meta.url),
 * which neither resolves beside the package nor is recognised by the embedding app's bundler.
 * Rewrite it to the standard `new URL("./assets/…", import.meta.url)` form, which Vite and
 * webpack both detect inside `new Worker(…)` and bundle for the app.
 */
function portableWorkerUrl(): Plugin {
  return {
    name: 'jev-portable-worker-url',
    renderChunk(code) {
      const out = code.replace(
        /new URL\(\s*(?:\/\*\s*@vite-ignore\s*\*\/\s*)?"\/(assets\/[^"]+\.js)",\s*""\s*\+\s*import\.meta\.url\s*\)/g,
        'new URL("./$1", import.meta.url)',
      );
      return out === code ? null : { code: out, map: null };
    },
  };
}

/**
 * Inside the engine's worker (itself in assets/), the grammar worker it spawns
 * (src/engine/grammar/grammar-thread.ts) is written the same root way: rewritten to its name
 * beside the engine's worker, `new URL("./grammar.worker-….js", import.meta.url)`.
 */
function siblingWorkerUrl(): Plugin {
  return {
    name: 'jev-sibling-worker-url',
    renderChunk(code) {
      const out = code.replace(
        /new URL\(\s*(?:\/\*\s*@vite-ignore\s*\*\/\s*)?[`"]\/assets\/([^`"]+\.js)[`"],\s*(?:``|"")\s*\+\s*import\.meta\.url\s*\)/g,
        'new URL("./$1", import.meta.url)',
      );
      return out === code ? null : { code: out, map: null };
    },
  };
}

export default defineConfig({
  plugins: [ortFiles(), portableWorkerUrl()],
  publicDir: false,
  worker: { format: 'es', plugins: () => [ortUrlRewrite(), siblingWorkerUrl()] },
  build: {
    outDir: 'dist/lib',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    lib: { entry: { index: 'src/index.ts', 'ai-sdk': 'src/ai-sdk/index.ts', vite: 'build/vite-plugin.ts' }, formats: ['es'] },
    rollupOptions: {
      external: [/^node:/, 'vite'],
    },
  },
});
