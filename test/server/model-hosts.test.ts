/**
 * Model files from every kind of host (docs/server.md): an HTTP host in the hub layout (a loopback
 * mirror, e2e/support/model-host.ts), `file://`, a folder, and the bundled copy. Over HTTP the
 * embedded engine's files go through the page's integrity-checked store, kept on disk under
 * --cache-dir: the answers equal the folder's; a second start needs no host; a download cut
 * halfway is resumed with Range (206) at the next start; a file whose SHA-256 is not the one the
 * host states is refused and not stored. The relay's tokenizer loads over HTTP too (it failed on
 * a detached ArrayBuffer).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionResponse } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import type { LoadEvent } from '../../src/protocol/engine-api.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { loadServedModel } from '../../src/server/served-model.ts';
import { startModelHost, type ModelHost, type ModelHostOptions } from '../../e2e/support/model-host.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY, TINYSTORIES } from '../support/models.ts';
import { embeddedOptions, post } from './support/served.ts';

const PATH = '/inference/jev/api/alpha/decisions';
const BODY = {
  model: 'jev',
  state: 'I was charged twice for one order; please refund the duplicate.',
  questions: {
    refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
    team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Charges', support: 'Anything else' } },
  },
} as const;
const GRAPH = `${TINY}/onnx/model.onnx`;
const sha256 = (path: string) => createHash('sha256').update(readFileSync(join(GENERATED, path))).digest('hex');
/** The hub's headers: the SHA-256 of large files as X-Linked-ETag. */
const hubHeaders = (path: string): Record<string, string> => (path.includes('/onnx/') ? { 'X-Linked-ETag': `"${sha256(path)}"` } : { ETag: `"${path}"` });

const dirs: string[] = [];
const cacheDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'jev-cache-'));
  dirs.push(d);
  return d;
};

async function decision(server: RunningServer): Promise<DecisionResponse> {
  const res = await post(server, PATH, BODY);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as DecisionResponse;
}

function expectClose(a: DecisionResponse, b: DecisionResponse): void {
  for (const [key, x] of Object.entries(a.answers)) {
    const y = b.answers[key]!;
    if ('probabilities' in x && 'probabilities' in y) {
      for (const [k, p] of Object.entries(x.probabilities)) expect(Math.abs((y.probabilities as Record<string, number>)[k]! - p), `${key}.${k}`).toBeLessThan(1e-4);
    }
    if (x.type === 'noul' && y.type === 'noul') expect(Math.abs(y.noul - x.noul)).toBeLessThan(1e-4);
  }
}

/** What a start failed with. */
async function startError(options: Parameters<typeof startServer>[0]): Promise<{ status: number; code: string; message: string; param: string | null; details?: Record<string, unknown> }> {
  const e = await startServer(options).then(
    async (s) => {
      await s.close();
      throw new Error('the server started');
    },
    (err: unknown) => err,
  );
  return e as never;
}

describe('model files from every kind of host', () => {
  let reference: DecisionResponse;
  let page: JevClient;
  const hosts: ModelHost[] = [];
  const host = async (options: ModelHostOptions = {}) => {
    const h = await startModelHost([GENERATED], 0, { ranges: true, headers: hubHeaders, ...options });
    hosts.push(h);
    return h;
  };
  beforeAll(async () => {
    ({ client: page } = await localClient(GENERATED, TINY));
    reference = await page.decisions.create(BODY);
  }, 60_000);
  afterAll(async () => {
    page?.terminate();
    await Promise.all(hosts.map((h) => h.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('loads from an HTTP host in the hub layout into --cache-dir, then starts from the cache with the host gone', async () => {
    const mirror = await host();
    const dir = cacheDir();
    const events: LoadEvent[] = [];
    const server = await startServer(embeddedOptions(TINY, { host: mirror.url, cacheDir: dir }), { onProgress: (e) => events.push(e) });
    try {
      expectClose(reference, await decision(server));
      expect(mirror.requests).toContain(`GET /${GRAPH.replace('/onnx/', '/resolve/main/onnx/')}`);
      const graph = events.filter((e): e is Extract<LoadEvent, { type: 'file' }> => e.type === 'file' && e.file === 'onnx/model.onnx');
      expect(graph.at(-1)?.loaded).toBe(readFileSync(join(GENERATED, GRAPH)).byteLength);
    } finally {
      await server.close();
    }
    // Stored with its size and SHA-256 (the page's integrity cache, on disk).
    const stored = readdirSync(join(dir, 'transformers-cache')).filter((f) => f.endsWith('.json'));
    const heads = stored.map((f) => JSON.parse(readFileSync(join(dir, 'transformers-cache', f), 'utf8')) as { url: string; headers: [string, string][] });
    const graphHead = heads.find((h) => h.url.endsWith('/onnx/model.onnx'))!;
    expect(new Map(graphHead.headers).get('x-jev-sha256')).toBe(sha256(GRAPH));
    await mirror.close();
    const offline = await startServer(embeddedOptions(TINY, { host: mirror.url, cacheDir: dir }));
    try {
      expectClose(reference, await decision(offline));
    } finally {
      await offline.close();
    }
  });

  it('resumes a download cut halfway with Range at the next start', async () => {
    let cut = true;
    const mirror = await host({ breakOff: (path) => cut && path === GRAPH });
    const dir = cacheDir();
    const failed = await startError(embeddedOptions(TINY, { host: mirror.url, cacheDir: dir }));
    expect(failed.code).toBe('model_load_failed');
    cut = false;
    const server = await startServer(embeddedOptions(TINY, { host: mirror.url, cacheDir: dir }));
    try {
      expect(mirror.ranged.filter((r) => r.path === GRAPH).map((r) => r.status)).toEqual([206]);
      expectClose(reference, await decision(server));
    } finally {
      await server.close();
    }
  });

  it('refuses a file whose SHA-256 is not the one the host states, and stores nothing of it', async () => {
    const mirror = await host({ headers: (path) => (path === GRAPH ? { 'X-Linked-ETag': `"${'0'.repeat(64)}"` } : hubHeaders(path)) });
    const dir = cacheDir();
    const e = await startError(embeddedOptions(TINY, { host: mirror.url, cacheDir: dir }));
    expect(e.code).toBe('model_load_failed');
    expect(e.details?.['reason']).toBe('file_corrupt');
    const heads = readdirSync(join(dir, 'transformers-cache'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => (JSON.parse(readFileSync(join(dir, 'transformers-cache', f), 'utf8')) as { url: string }).url);
    expect(heads.some((u) => u.endsWith('/onnx/model.onnx'))).toBe(false);
  });

  it('loads from file:// and from bundled, and names the path where a folder lacks the model', async () => {
    for (const [model, hostName] of [
      [TINY, pathToFileURL(GENERATED).href],
      [TINYSTORIES, 'bundled'],
    ] as const) {
      const server = await startServer(embeddedOptions(model, { host: hostName }));
      try {
        const status = await server.engine.status();
        expect(status.state).toBe('ready');
        expect(status.model).toBe(model);
        if (model === TINY) expectClose(reference, await decision(server));
      } finally {
        await server.close();
      }
    }
    const missing = await startError(embeddedOptions('no-such-model', { host: GENERATED }));
    expect(missing.param).toBe('model');
    expect(missing.message).toContain(join(GENERATED, 'no-such-model', 'config.json'));
  });

  it("refuses --device cuda where onnxruntime-node has no CUDA provider, naming the flag", async () => {
    const e = await startError(embeddedOptions(TINY, { device: 'cuda' }));
    expect(e.param).toBe('device');
    expect(e.message).toMatch(/--device cuda is not available: .*Use --device cpu/);
  });

  it('refuses --device cuda without the provider before an HTTP host is asked for anything', async () => {
    const mirror = await host();
    const dir = cacheDir();
    const e = await startError(embeddedOptions(TINY, { device: 'cuda', host: mirror.url, cacheDir: dir }));
    expect(e.param).toBe('device');
    expect(e.details).toMatchObject({ reason: 'device_unavailable' });
    expect(mirror.requests).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("reads the relay's tokenizer over HTTP as from a folder (no detached ArrayBuffer)", async () => {
    const mirror = await host();
    const [remote, local] = [await loadServedModel(TINY, mirror.url), await loadServedModel(TINY, GENERATED)];
    const text = 'State: café 日本語 — 10 refunds?';
    expect(remote.encode(text, false)).toEqual(local.encode(text, false));
    expect(remote.encode(text, false).length).toBeGreaterThan(3);
  });
});
