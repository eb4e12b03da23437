import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

/**
 * A plain static server in the Hugging Face layout: `/{model}/resolve/main/{file}` is read from
 * `{root}/{model}/{file}` for the first root that has it. It sends CORS headers as the hub does.
 * It records every path requested, so tests can see what was fetched.
 */
export interface Mirror {
  url: string;
  /** The folders it serves, first match wins. */
  roots: readonly string[];
  requests: string[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.json': 'application/json', '.onnx': 'application/octet-stream', '.gguf': 'application/octet-stream' };

export async function startMirror(roots: readonly string[], port = 0): Promise<Mirror> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url.pathname);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', '*');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Length, ETag');
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const m = /^\/(.+?)\/resolve\/[^/]+\/(.+)$/.exec(decodeURIComponent(url.pathname));
    const file = m && roots.map((r) => join(r, m[1]!, m[2]!)).find((p) => safe(p, roots) && existsSync(p) && statSync(p).isFile());
    if (!file) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Entry not found');
    const size = statSync(file).size;
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Content-Length': String(size) });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${actual}`,
    roots,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function safe(path: string, roots: readonly string[]): boolean {
  const p = normalize(path);
  return roots.some((r) => p.startsWith(normalize(r) + sep));
}
