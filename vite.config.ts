import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { ortFiles } from './build/ort-files.ts';

export default defineConfig({
  plugins: [preact(), ortFiles()],
  worker: { format: 'es' },
  build: { target: 'es2022', chunkSizeWarningLimit: 4096 },
  preview: { host: '127.0.0.1' },
  server: { host: '127.0.0.1' },
});
