import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { bundledModels } from './build/bundled-models.ts';
import { ortFiles, ortUrlRewrite } from './build/ort-files.ts';
import { ISOLATION_HEADERS } from './src/http/isolation.ts';

// Cross-origin isolation (src/http/isolation.ts), so that onnxruntime-web may run wasm threads.
const isolationHeaders = { ...ISOLATION_HEADERS };

export default defineConfig({
  plugins: [
    preact(),
    ortFiles(),
    bundledModels(),
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'worker',
      filename: 'sw.ts',
      injectRegister: false,
      manifest: {
        name: 'Jev local',
        short_name: 'Jev',
        description: 'Decisions and chat from a language model running in your browser.',
        theme_color: '#1f6feb',
        background_color: '#ffffff',
        display: 'standalone',
        icons: [{ src: 'icon.svg', sizes: 'any', type: 'image/svg+xml' }],
      },
      injectManifest: {
        // The bundled model's files too (build/bundled-models.ts): the page answers offline from the first visit.
        globPatterns: ['**/*.{js,mjs,css,html,wasm,svg,webmanifest}', 'bundled/**/*'],
        maximumFileSizeToCacheInBytes: 64 * 1024 * 1024,
      },
      devOptions: { enabled: true, type: 'module' },
    }),
  ],
  worker: { format: 'es', plugins: () => [ortUrlRewrite()] },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
  preview: { host: '127.0.0.1', headers: isolationHeaders },
  server: { host: '127.0.0.1', headers: isolationHeaders },
});
