import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';

/** The folder under the app where bundled models are served: `{base}bundled/{model}/resolve/main/{file}` (src/ui/model/bundled-model.ts). */
export const BUNDLED_PATH = 'bundled';

/** The models shipped in vendor/models that the app serves itself, with the files it needs (not the GGUF). */
const MODELS = ['TinyStories-656K'];
const VENDOR = fileURLToPath(new URL('../vendor/models/', import.meta.url));

/** Every file of a bundled model the engine reads, relative to its folder, with `/` separators. */
function filesOf(model: string): string[] {
  const root = join(VENDOR, model);
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'gguf' ? [] : walk(join(dir, e.name))) : [join(dir, e.name)]));
  return walk(root).map((f) => relative(root, f).split(sep).join('/'));
}

/**
 * Serves the models shipped with the repository from the app's own origin, in the hub's layout,
 * so that the page has a model that loads with no download from elsewhere (docs/offline.md,
 * "The bundled model"): emitted into the build (and so into the offline precache), and answered
 * by the dev and preview servers. Any other path under `bundled/` is a 404, never the page's
 * HTML (the engine asks for formats a model may not have, and must hear "no").
 */
export function bundledModels(): Plugin {
  const files = new Map<string, string>(MODELS.flatMap((model) => filesOf(model).map((file) => [`${model}/resolve/main/${file}`, join(VENDOR, model, file)] as const)));
  const serve = (base: string) => (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const prefix = `${base}${BUNDLED_PATH}/`;
    const path = decodeURIComponent(req.url?.split('?')[0] ?? '');
    if (!path.startsWith(prefix)) return next();
    const source = files.get(path.slice(prefix.length));
    if (!source) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not a bundled model file');
    res.setHeader('Content-Type', source.endsWith('.json') ? 'application/json' : 'application/octet-stream');
    res.setHeader('Content-Length', String(statSync(source).size));
    res.end(req.method === 'HEAD' ? undefined : readFileSync(source));
  };
  let base = '/';
  return {
    name: 'jev-bundled-models',
    configResolved(config) {
      base = config.base;
    },
    generateBundle() {
      for (const [path, source] of files) this.emitFile({ type: 'asset', fileName: `${BUNDLED_PATH}/${path}`, source: readFileSync(source) });
    },
    configureServer(server) {
      server.middlewares.use(serve(base));
    },
    configurePreviewServer(server) {
      server.middlewares.use(serve(base));
    },
  };
}
