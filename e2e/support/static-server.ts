import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json',
};

/**
 * A static server for a built folder, cross-origin isolated like `vite preview`, whose files a
 * test can rewrite on the fly (`override`), e.g. to publish a "new version" of the service worker.
 */
export async function startStatic(root: string, port: number, headers: Record<string, string> = {}) {
  const overrides = new Map<string, (body: string) => string>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const file = normalize(join(root, path === '/' ? 'index.html' : path));
    if (!file.startsWith(normalize(root)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    let body: Buffer | string = readFileSync(file);
    const rewrite = overrides.get(path);
    if (rewrite) body = rewrite(body.toString('utf8'));
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      ...headers,
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
    override: (path: string, rewrite: (body: string) => string) => overrides.set(path, rewrite),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
