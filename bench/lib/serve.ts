import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { build } from 'vite';

export const BENCH_DIR = resolve(import.meta.dirname, '..');
export const DIST = join(BENCH_DIR, 'dist');

/** Builds bench/page into bench/dist with its own vite config (onnxruntime files self-hosted). */
export async function buildPage(): Promise<string> {
  await build({ configFile: join(BENCH_DIR, 'vite.config.ts'), logLevel: 'warn' });
  return DIST;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
};

/**
 * Serves a folder with the headers that make the page cross-origin isolated (COOP + COEP), which
 * onnxruntime-web needs for SharedArrayBuffer, hence for more than one wasm thread.
 */
export async function serveStatic(dir: string, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const root = normalize(dir);
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    let file = normalize(join(root, path === '/' ? 'index.html' : path));
    if (!file.startsWith(root + sep)) return void res.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return void res.writeHead(404).end('not found');
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': String(statSync(file).size),
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const a = server.address();
  const actual = typeof a === 'object' && a ? a.port : port;
  return { url: `http://127.0.0.1:${actual}`, close: () => new Promise((r) => server.close(() => r())) };
}
