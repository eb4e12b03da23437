import { defineConfig, type Plugin } from 'vite';

/**
 * The server's build (`jev-local serve`, src/server/): Node ES modules in dist/lib, each with every
 * JavaScript dependency inside it, so that the published package (whose `files` are dist/lib, the
 * bundled model and the README) runs them with nothing but its own dependencies installed.
 * bin/jev-local.mjs imports `server.js` when present, and the TypeScript sources through tsx in a
 * checkout. One build per file, chosen by `--mode` (build:lib runs the three):
 * - (default) `server.js`: src/server/main.ts;
 * - `--mode engine-thread`, `engine-thread.js`: the in-process engine's thread
 *   (worker/engine.worker.node.ts, started by src/server/engine-thread.ts);
 * - `--mode grammar-thread`, `grammar-thread.js`: the grammar compiler's thread
 *   (worker/grammar.worker.node.ts, started by src/engine/grammar/grammar-thread.ts).
 *
 * onnxruntime-node is native: never bundled, it is the package's dependency, resolved at run time
 * beside it. transformers.js' Node build requires it when it starts: the engine's thread runs
 * models on it; the server's main thread reads tokenizers only, so there the require is removed
 * (server.js then loads no native runtime). sharp (images) is never used: a stand-in that throws.
 */
const BUILDS: Record<string, { entry: string; file: string; runsModels: boolean }> = {
  production: { entry: 'src/server/main.ts', file: 'server.js', runsModels: false },
  'engine-thread': { entry: 'worker/engine.worker.node.ts', file: 'engine-thread.js', runsModels: true },
  'grammar-thread': { entry: 'worker/grammar.worker.node.ts', file: 'grammar-thread.js', runsModels: false },
};

const STUBBED = ['sharp'];

function nativeRuntimes(runsModels: boolean): Plugin {
  const prefix = '\0jev-without:';
  return {
    name: 'jev-native-runtimes',
    enforce: 'pre',
    resolveId(id) {
      if (id === 'onnxruntime-node') return { id, external: true };
      return STUBBED.includes(id) ? prefix + id : null;
    },
    load(id) {
      if (!id.startsWith(prefix)) return null;
      const name = id.slice(prefix.length);
      return `export default function unavailable() { throw new Error('${name} is not part of jev-local serve'); }`;
    },
    transform(code, id) {
      // transformers.js requires onnxruntime-node at run time (createRequire), out of the bundler's sight.
      if (runsModels || !id.includes('@huggingface/transformers') || !code.includes('requireFromHere("onnxruntime-node")')) return null;
      return { code: code.replace('requireFromHere("onnxruntime-node")', '{}'), map: null };
    },
  };
}

export default defineConfig(({ mode }) => {
  const build = BUILDS[mode];
  if (!build) throw new Error(`vite.server.config.ts: no build for --mode ${mode} (one of ${Object.keys(BUILDS).join(', ')})`);
  return {
    plugins: [nativeRuntimes(build.runsModels)],
    publicDir: false,
    ssr: { noExternal: true, target: 'node' },
    build: {
      ssr: build.entry,
      outDir: 'dist/lib',
      emptyOutDir: false,
      target: 'node20',
      sourcemap: false,
      rollupOptions: {
        external: [/^node:/],
        output: { entryFileNames: build.file, codeSplitting: false },
      },
    },
  };
});
