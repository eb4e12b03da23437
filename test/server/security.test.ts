/**
 * The server's defaults on a laptop (docs/server.md, "Security"), over loopback only: a foreign Host
 * (DNS rebinding) and a foreign Origin (with and without a preflight, a text/plain simple request)
 * get 403 `forbidden` before any work (the engine's forward passes do not move); an allowed origin
 * gets CORS headers and its preflight 204; a wrong key 401; a half-sent request is closed within
 * the request timeout; 1,000 idle sockets do not keep a real request out; binding beyond
 * loopback without a key warns, naming the risk. Every refusal is the contract's error body.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exposureWarning, startServer, type RunningServer } from '../../src/server/serve.ts';
import { hostName, RequestGuard } from '../../src/server/request-guard.ts';
import { TINYSTORIES } from '../support/models.ts';
import { embeddedOptions } from './support/served.ts';

const PATH = '/inference/jev/api/alpha/decisions';
const BODY = JSON.stringify({ model: 'jev', state: 'A cat sat.', questions: { cat: { type: 'noul', instructions: 'Is there a cat?' } } });
const KEY = 'k-0123456789';
const APP = 'https://app.example';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over node:http, with any Host and headers. */
function send(server: RunningServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers: { ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Bytes written as they are on a new connection; what came back, and how long until the server closed it. */
async function raw(server: RunningServer, bytes: string): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const socket = connect(server.port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => (text += c));
  socket.on('error', () => undefined);
  socket.write(bytes);
  await new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { text, ms: performance.now() - started };
}

function errorOf(a: Answer): { message: string; type: string; param: string | null; code: string } {
  const parsed = JSON.parse(a.body) as { error: { message: string; type: string; param: string | null; code: string } };
  expect(Object.keys(parsed.error)).toEqual(expect.arrayContaining(['message', 'type', 'param', 'code']));
  return parsed.error;
}

describe('the server on a laptop: Host, Origin, key, connections', () => {
  let server: RunningServer;
  const passes = async () => (await server.engine.status()).counters.forwardPasses;
  const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  beforeAll(async () => {
    server = await startServer(embeddedOptions(TINYSTORIES, { host: null, apiKey: KEY, allowedHosts: ['box.lan'], corsOrigins: [APP], maxConnections: 64 }), {
      connections: { headersTimeoutMs: 1000, requestTimeoutMs: 1500, checkEveryMs: 250 },
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('answers for localhost, the loopback addresses and --allowed-host; 403 for any other Host, before any work', async () => {
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`, 'box.lan', `app.localhost:${server.port}`]) {
      const a = await send(server, 'GET', '/v1/models', { host, authorization: `Bearer ${KEY}` });
      expect(a.status, host).toBe(200);
    }
    const before = await passes();
    for (const host of ['evil.example', `evil.example:${server.port}`, 'localhost.evil.example', '127.0.0.1.nip.io', '10.1.2.3']) {
      const a = await send(server, 'POST', PATH, { ...auth, host }, BODY);
      expect(a.status, host).toBe(403);
      const e = errorOf(a);
      expect(e.code).toBe('forbidden');
      expect(e.type).toBe('invalid_request_error');
      expect(e.message).toContain(host);
    }
    // No Host at all (HTTP/1.0).
    const bare = await raw(server, `POST ${PATH} HTTP/1.0\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`);
    expect(bare.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(bare.text).toContain('"code":"forbidden"');
    expect(await passes()).toBe(before);
  });

  it('refuses a foreign Origin, with or without a preflight and as a text/plain simple request; an allowed one gets CORS', async () => {
    const before = await passes();
    const preflight = await send(server, 'OPTIONS', PATH, { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(errorOf(preflight).code).toBe('forbidden');
    for (const type of ['application/json', 'text/plain']) {
      const a = await send(server, 'POST', PATH, { ...auth, 'content-type': type, origin: 'https://evil.example' }, BODY);
      expect(a.status, type).toBe(403);
      expect(a.headers['access-control-allow-origin']).toBeUndefined();
      expect(errorOf(a).message).toContain('https://evil.example');
    }
    // Without a key either: a page cannot learn anything, not even whether the key is right.
    const simple = await send(server, 'POST', PATH, { 'content-type': 'text/plain', origin: 'null' }, BODY);
    expect(simple.status).toBe(403);
    expect(await passes()).toBe(before);

    const ok = await send(server, 'OPTIONS', PATH, { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' });
    expect(ok.status).toBe(204);
    expect(ok.headers['access-control-allow-origin']).toBe(APP);
    expect(ok.headers['access-control-allow-methods']).toContain('POST');
    expect(ok.headers['access-control-allow-headers']).toBe('authorization, content-type');
    const answered = await send(server, 'POST', PATH, { ...auth, origin: APP }, BODY);
    expect(answered.status, answered.body).toBe(200);
    expect(answered.headers['access-control-allow-origin']).toBe(APP);
    expect(answered.headers['vary']).toBe('Origin');
    expect(await passes()).toBeGreaterThan(before);
  });

  it('answers a missing or wrong key 401 (the page\'s body), the right one 200', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${KEY}x`, `Bearer ${KEY.slice(0, -1)}`, KEY, `bearer ${KEY}`]) {
      const a = await send(server, 'POST', PATH, { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) }, BODY);
      expect(a.status, String(authorization)).toBe(401);
      expect(errorOf(a).code).toBe('unauthorized');
    }
    expect((await send(server, 'POST', PATH, auth, BODY)).status).toBe(200);
    // A path the surface does not serve is its 404 whatever the key.
    expect((await send(server, 'GET', '/nothing', {})).status).toBe(404);
    const guard = new RequestGuard({ bind: '127.0.0.1', allowedHosts: [], corsOrigins: [], apiKey: 'abc', serves: () => true });
    expect([guard.keyMatches('Bearer abc'), guard.keyMatches('Bearer abd'), guard.keyMatches('Bearer ab'), guard.keyMatches(undefined)]).toEqual([true, false, false, false]);
  });

  it('closes a half-sent request within the request timeout (408)', async () => {
    const before = await passes();
    // The header cut off; then a whole header and part of the body it announces.
    for (const partial of [
      `POST ${PATH} HTTP/1.1\r\nHost: localhost\r\nAuthor`,
      `POST ${PATH} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`,
    ]) {
      const { text, ms } = await raw(server, partial);
      expect(ms).toBeLessThan(1500 + 250 + 1500);
      expect(text, partial).toMatch(/^HTTP\/1\.1 408 /);
    }
    expect(await passes()).toBe(before);
  });

  it('serves a real request at once beside 1,000 idle sockets (the cap closes the oldest idle ones)', async () => {
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 1000; i++) {
        const s = connect(server.port, '127.0.0.1');
        s.on('error', () => undefined);
        sockets.push(s);
      }
      await Promise.all(sockets.map((s) => new Promise<void>((resolve) => (s.connecting ? s.once('connect', () => resolve()).once('close', () => resolve()) : resolve()))));
      const started = performance.now();
      const a = await send(server, 'POST', PATH, auth, BODY);
      expect(a.status, a.body).toBe(200);
      expect(performance.now() - started).toBeLessThan(5000);
      // Idle sockets are closed by the cap as they come (and by the header timeout, 1 s, after that).
      expect(server.evictedConnections()).toBeGreaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('warns when bound beyond loopback without a key, naming the risk', () => {
    for (const bind of ['0.0.0.0', '::', '192.168.1.20']) {
      const warning = exposureWarning({ bind, apiKey: undefined });
      expect(warning).toContain(`listening on ${bind} without --api-key`);
      expect(warning).toMatch(/anyone who can reach this address can run the model/);
    }
    expect(exposureWarning({ bind: '0.0.0.0', apiKey: 'k' })).toBeNull();
    expect(exposureWarning({ bind: '127.0.0.1', apiKey: undefined })).toBeNull();
    expect(exposureWarning({ bind: '::1', apiKey: undefined })).toBeNull();
    expect([hostName('LocalHost:80'), hostName('[::1]:8080'), hostName('a.b:x'), hostName('[::1')]).toEqual(['localhost', '::1', null, null]);
  });
});
