import { resolve } from 'node:path';
import { defineConfig } from 'vite';
import { ortFiles } from '../build/ort-files.ts';

/**
 * The bench page: bench/page → bench/dist, with onnxruntime-web's runtime files self-hosted
 * under ort/ (the same plugin the app uses), so a run fetches nothing from a CDN.
 */
export default defineConfig({
  root: resolve(import.meta.dirname, 'page'),
  base: '/',
  logLevel: 'warn',
  plugins: [ortFiles()],
  worker: { format: 'es' },
  build: {
    outDir: resolve(import.meta.dirname, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 8192,
    minify: false,
    // The bench page, a tab of the library's client and a tab without it (the `tabs` rows), an app's start-up (the `load_visits` rows).
    rollupOptions: {
      input: {
        main: resolve(import.meta.dirname, 'page/index.html'),
        tabs: resolve(import.meta.dirname, 'page/tabs.html'),
        blank: resolve(import.meta.dirname, 'page/blank.html'),
        load: resolve(import.meta.dirname, 'page/load.html'),
      },
    },
  },
});
