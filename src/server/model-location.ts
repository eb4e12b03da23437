import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HOST } from '../facade/defaults.ts';
import { localFolder } from './served-model.ts';

/** The model the repository ships (vendor/models, Apache-2.0): the server's one-command start needs no network. */
export const BUNDLED_MODEL = 'TinyStories-656K';

/** Where a model's files are: a folder in the hub layout (`{root}/{model}/…`), or an HTTP(S) host (`{host}/{model}/resolve/main/…`). */
export type ModelLocation = { kind: 'folder'; root: string; host: string } | { kind: 'http'; host: string };

/**
 * The folder of bundled models: vendor/models beside src/ in a checkout, and beside dist/ in the
 * package (src/server/x.ts and dist/lib/server.js are both two levels below the root).
 */
export function bundledRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../vendor/models');
}

/**
 * `--host` read: unset is the bundled copy for TinyStories-656K and the hub for any other model;
 * `bundled` is the bundled folder; an http(s) URL a host; `file://…` or a path a folder.
 */
export function modelLocation(model: string, host: string | null): ModelLocation {
  if ((host === null && model === BUNDLED_MODEL) || host === 'bundled') return { kind: 'folder', root: bundledRoot(), host: 'bundled' };
  const h = host ?? DEFAULT_HOST;
  const folder = localFolder(h);
  if (folder === null) return { kind: 'http', host: h.replace(/\/+$/, '') };
  return { kind: 'folder', root: folder, host: h };
}

/** Whether a folder location holds the model at all (its config.json), for a refusal that names the path. */
export function folderHasModel(root: string, model: string): boolean {
  return existsSync(join(root, model, 'config.json'));
}
