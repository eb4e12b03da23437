import { defineConfig } from 'vite';

/** The library's relay-only service worker, one classic script: dist/lib/jev-sw.js. */
export default defineConfig({
  publicDir: false,
  build: {
    outDir: 'dist/lib',
    emptyOutDir: false,
    target: 'es2022',
    lib: { entry: 'worker/relay-sw.ts', formats: ['iife'], name: 'jevServiceWorker', fileName: () => 'jev-sw.js' },
  },
});
