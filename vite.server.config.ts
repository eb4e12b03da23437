import { defineConfig, type Plugin } from 'vite';

/**
 * The server's build (`jev-local serve`, src/server/): one Node ES module, `dist/lib/server.js`,
 * with every JavaScript dependency inside it, so that the published package (whose `files` are
 * dist/lib and the README) runs it with nothing but its own dependencies installed. bin/jev-local.mjs
 * imports it when present, and the TypeScript sources through tsx in a checkout.
 *
 * The server reads tokenizers, never weights or images: transformers.js' Node build loads
 * onnxruntime-node and sharp when it starts, so both are left out: a stand-in each that throws
 * if it is ever called.
 */
const WITHOUT = ['onnxruntime-node', 'sharp'];

function withoutNativeRuntimes(): Plugin {
  const prefix = '\0jev-without:';
  return {
    name: 'jev-without-native-runtimes',
    enforce: 'pre',
    resolveId(id) {
      return WITHOUT.includes(id) ? prefix + id : null;
    },
    load(id) {
      if (!id.startsWith(prefix)) return null;
      const name = id.slice(prefix.length);
      return `export default function unavailable() { throw new Error('${name} is not part of jev-local serve, which reads tokenizers only'); }`;
    },
    transform(code, id) {
      // transformers.js requires onnxruntime-node at run time (createRequire), out of the bundler's sight.
      if (!id.includes('@huggingface/transformers') || !code.includes('requireFromHere("onnxruntime-node")')) return null;
      return { code: code.replace('requireFromHere("onnxruntime-node")', '{}'), map: null };
    },
  };
}

export default defineConfig({
  plugins: [withoutNativeRuntimes()],
  publicDir: false,
  ssr: { noExternal: true, target: 'node' },
  build: {
    ssr: 'src/server/main.ts',
    outDir: 'dist/lib',
    emptyOutDir: false,
    target: 'node20',
    sourcemap: false,
    rollupOptions: {
      external: [/^node:/],
      output: { entryFileNames: 'server.js', codeSplitting: false },
    },
  },
});
