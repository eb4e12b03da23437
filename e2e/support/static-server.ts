import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.webmanifest': 'application/manifest+json',
  '.json': 'application/json',
  '.map': 'application/json',
};

export interface StaticServer {
  url: string;
  /** Rewrites a text file on its way out from now on, e.g. to publish a "new version" of the service worker. */
  override(path: string, rewrite: (body: string) => string): void;
  /** The requests that reached the server for `path` so far (a revalidation's 304 included). */
  hits(path: string): number;
  close(): Promise<void>;
}

/**
 * The one static server of the tests and the bench: a built folder (`root`, `/` is index.html),
 * cross-origin isolated like `vite preview` (COOP + COEP, so onnxruntime-web and wllama get
 * SharedArrayBuffer, hence wasm threads), plus folders mounted under a path (`mounts`: e.g.
 * `/models/` → the model roots, first hit wins). Files are streamed, except those a test rewrites
 * on the fly (`override`).
 */
export async function startStatic(root: string, port = 0, headers: Record<string, string> = {}, mounts: Record<string, readonly string[]> = {}): Promise<StaticServer> {
  const overrides = new Map<string, (body: string) => string>();
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const mount = Object.keys(mounts).find((prefix) => path.startsWith(prefix));
    const roots = mount ? mounts[mount]! : [root];
    const rel = mount ? path.slice(mount.length) : path === '/' ? 'index.html' : path;
    const file = roots.map((r) => normalize(join(r, rel))).find((f) => roots.some((r) => f.startsWith(normalize(r) + sep)) && existsSync(f) && statSync(f).isFile());
    if (!file) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    const rewrite = overrides.get(path);
    const body = rewrite ? Buffer.from(rewrite(readFileSync(file, 'utf8'))) : null;
    const stat = statSync(file);
    // Validators, as any real host sends them, so that a return visit revalidates (304) and the
    // browser keeps what it derived from the file: V8's code cache for onnxruntime's wasm and the
    // scripts (docs/benchmarks.md, "Where a load goes"). A rewritten file's tag is its body's hash.
    const etag = body ? `"${createHash('sha1').update(body).digest('base64url')}"` : `"${stat.size.toString(36)}-${stat.mtimeMs.toString(36)}"`;
    const common = { 'Cache-Control': 'no-cache', ETag: etag, 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', ...headers };
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, common).end();
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': String(body ? body.byteLength : stat.size),
      'Last-Modified': stat.mtime.toUTCString(),
      ...common,
    });
    if (req.method === 'HEAD') return void res.end();
    if (body) return void res.end(body);
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`,
    override: (path, rewrite) => void overrides.set(path, rewrite),
    hits: (path) => hits.get(path) ?? 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
