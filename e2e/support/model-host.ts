import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join, normalize, sep } from 'node:path';

/**
 * A model host in the Hugging Face layout: `/{model}/resolve/main/{file}` is read from
 * `{root}/{model}/{file}` for the first root that has it, with the CORS headers the hub sends.
 * It is the mirror the tests, the bench and the eval load models from, and it records every
 * request. It can also misbehave on purpose, for the load-failure tests: without CORS headers
 * (a browser then refuses its answers), hiding some files (404), rewriting a file's bytes on the
 * way (e.g. an operator renamed to one no backend has), breaking a download off halfway, or
 * stating a file's SHA-256. Files it sends as they are, it streams (model files are hundreds of MB).
 * It logs every request that asks for a `Range`, and honours `Range: bytes=N-` where told to.
 */
export interface ModelHostOptions {
  /** Send `Access-Control-Allow-Origin: *` and `Cross-Origin-Resource-Policy` as the hub does (default true). */
  cors?: boolean;
  /** Files (`{model}/{file}`) answered with 404 although they exist. */
  hide?: (path: string) => boolean;
  /** Rewrites the bytes of a file (`{model}/{file}`) before they are sent. */
  rewrite?: (path: string, body: Buffer) => Buffer;
  /** Files whose answer breaks off halfway (the connection drops after half the bytes). */
  breakOff?: (path: string, range?: string) => boolean;
  /**
   * With `breakOff`: after half the bytes, hold the connection open until `cut()`, instead of
   * dropping it 50 ms later. A browser that hears of the failure before its page has read the
   * bytes drops them (Chromium errors the body at once), so a test that needs the half received
   * waits for the page to report it, then cuts.
   */
  holdBreaks?: boolean;
  /** Extra headers for a file's answer (e.g. the hub's `X-Linked-ETag`, its SHA-256). */
  headers?: (path: string) => Record<string, string>;
  /** Answer `Range: bytes=N-` with 206 and the rest, as the hub does (default false: such a host ignores it and sends the whole file). */
  ranges?: boolean;
}

export interface ModelHost {
  url: string;
  /** The folders it serves, first match wins. */
  roots: readonly string[];
  /** Every path requested, with its method: `GET /m/resolve/main/config.json`. */
  requests: string[];
  /** Every request that carried a `Range` header: the path, the header, and the status answered. */
  ranged: { path: string; range: string; status: number }[];
  /** Drops the connections held open by `holdBreaks`; returns how many. */
  cut(): number;
  close(): Promise<void>;
}

export async function startModelHost(roots: readonly string[], port = 0, options: ModelHostOptions = {}): Promise<ModelHost> {
  const cors = options.cors ?? true;
  const requests: string[] = [];
  const ranged: ModelHost['ranged'] = [];
  const held = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    if (cors) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Allow-Headers', '*');
      res.setHeader('Access-Control-Expose-Headers', 'Content-Length, Content-Range, ETag, X-Linked-ETag');
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    }
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const m = /^\/(.+?)\/resolve\/[^/]+\/(.+)$/.exec(decodeURIComponent(url.pathname));
    const path = m ? `${m[1]}/${m[2]}` : null;
    const file = path && !options.hide?.(path) ? roots.map((r) => join(r, path)).find((p) => inside(p, roots) && existsSync(p) && statSync(p).isFile()) : undefined;
    if (!path || !file) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Entry not found');
    const type = file.endsWith('.json') ? 'application/json' : 'application/octet-stream';
    const size = statSync(file).size;
    const asked = req.headers.range && options.ranges ? /^bytes=(\d+)-$/.exec(req.headers.range) : null;
    const from = asked && Number(asked[1]) < size ? Number(asked[1]) : 0;
    const status = from > 0 ? 206 : 200;
    const partial: Record<string, string> = status === 206 ? { 'Content-Range': `bytes ${from}-${size - 1}/${size}` } : {};
    if (req.headers.range) ranged.push({ path, range: req.headers.range, status });
    const breaking = req.method !== 'HEAD' && !!options.breakOff?.(path, req.headers.range);
    if (!options.rewrite && !breaking) {
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(size - from), ...partial, ...options.headers?.(path) });
      if (req.method === 'HEAD') return void res.end();
      return void createReadStream(file, { start: from }).pipe(res);
    }
    let body: Buffer = readFileSync(file);
    if (options.rewrite) body = options.rewrite(path, body);
    body = body.subarray(from);
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': String(body.byteLength), ...partial, ...options.headers?.(path) });
    if (breaking) {
      if (options.holdBreaks) return void res.write(body.subarray(0, body.byteLength >> 1), () => held.add(res));
      return void res.write(body.subarray(0, body.byteLength >> 1), () => setTimeout(() => res.destroy(), 50));
    }
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${actual}`,
    roots,
    requests,
    ranged,
    cut: () => {
      const n = held.size;
      for (const res of held) res.destroy();
      held.clear();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed): connections are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function inside(path: string, roots: readonly string[]): boolean {
  const p = normalize(path);
  return roots.some((r) => p.startsWith(normalize(r) + sep));
}
