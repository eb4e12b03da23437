/**
 * The peers page's server: the built page (bench/peers/dist) with the headers that make it
 * cross-origin isolated (COOP + COEP, so SharedArrayBuffer and wasm threads work for both
 * onnxruntime-web and wllama), and the model folders under /models/<name>/<file>, same-origin
 * (transformers.js reads them with env.localModelPath = '/models/'; wllama gets the GGUF by URL).
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { build } from 'vite';

export const PEERS_DIR = import.meta.dirname;
export const PEERS_DIST = join(PEERS_DIR, 'dist');
export const REPO = resolve(PEERS_DIR, '../..');
/** Where models are looked up, first hit wins: the generated ones, then the vendored ones. */
export const MODEL_ROOTS = [join(REPO, 'models'), join(REPO, 'vendor/models')];

/** Builds bench/peers/page into bench/peers/dist (onnxruntime-web and wllama runtime files self-hosted). */
export async function buildPeersPage(): Promise<string> {
  await build({ configFile: join(PEERS_DIR, 'vite.config.ts'), logLevel: 'warn' });
  return PEERS_DIST;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.map': 'application/json',
};

function inside(root: string, file: string): boolean {
  return file.startsWith(normalize(root) + sep);
}

export interface PeersServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `dist` at / and the model roots at /models/. Port 0 picks a free one. */
export async function servePeers(dist = PEERS_DIST, roots: readonly string[] = MODEL_ROOTS, port = 0): Promise<PeersServer> {
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file: string | undefined;
    if (path.startsWith('/models/')) {
      const rel = path.slice('/models/'.length);
      file = roots.map((r) => normalize(join(r, rel))).find((f) => roots.some((r) => inside(r, f)) && existsSync(f) && statSync(f).isFile());
    } else {
      const f = normalize(join(dist, path === '/' ? 'index.html' : path));
      if (inside(dist, f) && existsSync(f) && statSync(f).isFile()) file = f;
    }
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    };
    if (!file) return void res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end('not found');
    res.writeHead(200, {
      ...headers,
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': String(statSync(file).size),
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const a = server.address();
  const actual = typeof a === 'object' && a ? a.port : port;
  return { url: `http://127.0.0.1:${actual}`, close: () => new Promise((r) => server.close(() => r())) };
}
