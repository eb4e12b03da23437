import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStatic, type StaticServer } from '../../e2e/support/static-server.ts';

/**
 * The tests' and the bench's static server answers as a real host does: with validators, and 304
 * to a request that names the current one, so a return visit keeps the browser's code cache
 * (docs/benchmarks.md, "Where a load goes"). A changed file, or a rewritten one, gets a new tag.
 */
describe('the static server sends validators', () => {
  let root: string;
  let server: StaticServer;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'jev-static-'));
    writeFileSync(join(root, 'a.wasm'), new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    writeFileSync(join(root, 'sw.js'), 'self.version = 1;');
    server = await startStatic(root);
  });
  afterAll(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers 304 to the current tag, with the isolation headers, and 200 with the body to any other', async () => {
    const first = await fetch(`${server.url}/a.wasm`);
    const tag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(tag).toMatch(/^".+"$/);
    expect(first.headers.get('last-modified')).toBeTruthy();
    expect(new Uint8Array(await first.arrayBuffer())).toEqual(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));

    const again = await fetch(`${server.url}/a.wasm`, { headers: { 'If-None-Match': tag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(tag);
    expect(again.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    expect((await again.arrayBuffer()).byteLength).toBe(0);

    const other = await fetch(`${server.url}/a.wasm`, { headers: { 'If-None-Match': '"stale"' } });
    expect(other.status).toBe(200);
    expect((await other.arrayBuffer()).byteLength).toBe(8);
  });

  it('gives a file changed on disk a new tag, even at the same size', async () => {
    const before = (await fetch(`${server.url}/a.wasm`)).headers.get('etag')!;
    writeFileSync(join(root, 'a.wasm'), new Uint8Array([0, 97, 115, 109, 2, 0, 0, 0]));
    utimesSync(join(root, 'a.wasm'), new Date(), new Date(Date.now() + 5_000));
    const after = await fetch(`${server.url}/a.wasm`, { headers: { 'If-None-Match': before } });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(before);
    expect(new Uint8Array(await after.arrayBuffer())[4]).toBe(2);
  });

  it('gives a rewritten file the tag of its new body', async () => {
    const plain = (await fetch(`${server.url}/sw.js`)).headers.get('etag')!;
    server.override('/sw.js', (body) => body.replace('1', '2'));
    const rewritten = await fetch(`${server.url}/sw.js`, { headers: { 'If-None-Match': plain } });
    expect(rewritten.status).toBe(200);
    expect(await rewritten.text()).toBe('self.version = 2;');
    const tag = rewritten.headers.get('etag')!;
    expect((await fetch(`${server.url}/sw.js`, { headers: { 'If-None-Match': tag } })).status).toBe(304);
    server.override('/sw.js', (body) => body.replace('1', '3'));
    expect((await fetch(`${server.url}/sw.js`, { headers: { 'If-None-Match': tag } })).status).toBe(200);
  });
});
