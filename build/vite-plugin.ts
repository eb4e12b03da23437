// `jev-local/vite`: the Vite plugin an embedding app adds so that onnxruntime-web's files are
// self-hosted under ort/ (emitted into its build, served by its dev server), read from this
// package's own dist/lib/ort/ folder.
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { ortFiles, ortUrlRewrite } from './ort-files.ts';

export function jevOrtFiles(): Plugin[] {
  return [ortFiles(fileURLToPath(new URL('./ort/', import.meta.url))), ortUrlRewrite()];
}
