/**
 * Model files handed from the engine's fetch straight to `InferenceSession.create`
 * (src/engine/load/model-handoff.ts, model-fetch.ts, session-rewrites.ts), read by transformers.js' own
 * `readResponse` (the function its `from_pretrained` reads every file with):
 *
 * - what transformers.js reads is a buffer of the file's length that holds the ticket and zeros
 *   only; the ticket names exactly the bytes sent, kept in the one buffer they were read into;
 * - download progress comes from the fetch, byte for byte up to the file's length;
 * - the cache stores what was downloaded, and a cached file is handed off without the network;
 * - a download the cache refuses fails the read, and nothing stays deposited;
 * - files that are not graphs, and fetches outside a handoff, get their real bodies;
 * - in onnxruntime-web itself: a session created from the tickets (a graph, and a graph with its
 *   external data) gives bit for bit the logits of one created, with the same rewrites, from the files, and every buffer
 *   is released once it exists; a failed load releases what was deposited.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
// transformers.js' reader of a model file's body (what `from_pretrained` calls with a progress callback).
// @ts-expect-error transformers.js' sources ship without declarations
import { readResponse } from '../../node_modules/@huggingface/transformers/src/utils/hub/utils.js';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import type { IntegrityCache } from '../../src/engine/load/storage/integrity-cache.ts';
import { currentHandoff, ModelHandoff, TICKET_MAGIC, withHandoff } from '../../src/engine/load/model-handoff.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import { withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { byteSource, pattern } from '../support/byte-source.ts';
import { loadOrtWeb, promptLogits, type OrtSession, type OrtWeb } from '../support/ort-web.ts';

const BASE = 'http://host.test/m/resolve/main/';

/** A host serving `files` (name → bytes) as byte streams in 64 KiB chunks, counting requests. */
function host(files: Record<string, Uint8Array>) {
  const requests: string[] = [];
  const bodies: { url: string; cancelled: () => boolean }[] = [];
  const fetch = async (input: string | URL) => {
    const url = String(input);
    requests.push(url);
    const bytes = files[url.slice(BASE.length)];
    if (!bytes) return new Response('Entry not found', { status: 404 });
    const { stream, cancelled } = byteSource(bytes, [65_536]);
    bodies.push({ url, cancelled });
    return new Response(stream, { headers: { 'content-length': String(bytes.length) } });
  };
  return { fetch, requests, cancelled: () => bodies.filter((b) => b.cancelled()).map((b) => b.url) };
}

/** An IntegrityCache stand-in (the real one needs the Cache API: e2e/offline.spec.ts, load-failures.spec.ts). */
function fakeCache(entries: Map<string, Uint8Array>, refuse = false): IntegrityCache {
  return {
    digests: new Map<string, string>(),
    async admit() {
      return true;
    },
    async read(key: string) {
      const hit = entries.get(key);
      return hit && { bytes: hit.slice().buffer, headers: new Headers({ 'content-length': String(hit.length) }) };
    },
    async match() {
      throw new Error('a handed-off file is read with read(), not match()');
    },
    async head() {
      return undefined;
    },
    async store(key: string, body: ArrayBuffer) {
      if (refuse) throw new Error(`The download of ${key} is corrupt`);
      entries.set(key, new Uint8Array(body.slice(0)));
    },
  } as unknown as IntegrityCache;
}

/** Reads a response as transformers.js does, returning its buffer and the progress it saw. */
async function transformersRead(response: Response): Promise<{ buffer: Uint8Array; seen: number[] }> {
  const seen: number[] = [];
  const buffer = (await readResponse(response, ({ loaded }: { loaded: number }) => seen.push(loaded))) as Uint8Array;
  return { buffer, seen };
}

/** A handoff recording the progress it is told of. */
function recordingHandoff() {
  const progress: { url: string; loaded: number; total: number }[] = [];
  return { handoff: new ModelHandoff((url, loaded, total) => progress.push({ url, loaded, total })), progress };
}

const equal = (a: Uint8Array | null, b: Uint8Array) => a !== null && Buffer.from(a).equals(Buffer.from(b));

describe('ModelHandoff', () => {
  it('carries graphs and their external data, nothing else', () => {
    for (const url of [`${BASE}onnx/model.onnx`, `${BASE}onnx/model_q4.onnx?download=1`, `${BASE}onnx/model_fp16.onnx_data`, `${BASE}onnx/model.onnx_data_1`, '/models/x/onnx/model.onnx.data'])
      expect(ModelHandoff.carries(url), url).toBe(true);
    for (const url of [`${BASE}tokenizer.json`, `${BASE}config.json`, `${BASE}onnx/model.onnx.json`, `${BASE}onnx/model.onnxx`])
      expect(ModelHandoff.carries(url), url).toBe(false);
  });

  it('a ticket, at the start of a buffer of any length, names its bytes; nothing else does', () => {
    const a = new ModelHandoff();
    const b = new ModelHandoff();
    const file = pattern(5000);
    const deposited = file.slice().buffer;
    const ticket = a.deposit('u', deposited);
    expect(new TextDecoder().decode(ticket).startsWith(TICKET_MAGIC)).toBe(true);
    const read = new Uint8Array(file.length);
    read.set(ticket);
    expect(a.claim(read)!.buffer).toBe(deposited);
    expect(a.claim(ticket)!.buffer).toBe(deposited);
    expect(b.claim(read)).toBeNull();
    expect(a.claim(file)).toBeNull();
    expect(a.claim(new Uint8Array(0))).toBeNull();
    // A second deposit has a ticket of its own.
    const other = a.deposit('v', pattern(10, 2).buffer as ArrayBuffer);
    expect(equal(a.claim(other), pattern(10, 2))).toBe(true);
    // Released: detached, and no longer named.
    expect(a.release(a.claim(read)!)).toBe(5000);
    expect(deposited.byteLength).toBe(0);
    expect(a.claim(read)).toBeNull();
    expect(a.releaseAll()).toBe(10);
    expect(a.releaseAll()).toBe(0);
  });

  it('withHandoff makes it current for the load only, and releases what is still deposited', async () => {
    const handoff = new ModelHandoff();
    const buffer = pattern(64).buffer as ArrayBuffer;
    await expect(
      withHandoff(handoff, async () => {
        expect(currentHandoff()).toBe(handoff);
        handoff.deposit('u', buffer);
        throw new Error('the load failed');
      }),
    ).rejects.toThrow(/the load failed/);
    expect(currentHandoff()).toBeNull();
    expect(buffer.byteLength).toBe(0);
  });
});

describe('modelFetch with a handoff', () => {
  const file = pattern(3 * 65_536 + 777, 5);
  const url = `${BASE}onnx/model.onnx`;

  it('a download: transformers.js reads the ticket into a buffer of the file length; the ticket names the bytes sent; progress comes from the fetch; the cache has the file', async () => {
    const net = host({ 'onnx/model.onnx': file });
    const entries = new Map<string, Uint8Array>();
    const { handoff, progress } = recordingHandoff();
    const fetchModel = modelFetch(net.fetch, fakeCache(entries), () => handoff);
    const { buffer, seen } = await transformersRead(await fetchModel(url));
    expect(buffer.byteLength).toBe(file.length);
    const ticketLength = buffer.indexOf(0);
    expect(ticketLength).toBeGreaterThan(TICKET_MAGIC.length);
    expect(buffer.subarray(ticketLength).every((b) => b === 0)).toBe(true);
    // transformers.js saw the ticket arrive, nothing more.
    expect(seen).toEqual([ticketLength]);
    expect(equal(handoff.claim(buffer), file)).toBe(true);
    expect(handoff.handled(url)).toBe(true);
    // The fetch's progress: every chunk, in order, to the file's length.
    expect(progress.map((p) => p.loaded)).toEqual(Array.from({ length: 4 }, (_, i) => Math.min(file.length, (i + 1) * 65_536)));
    expect(progress.every((p) => p.url === url && p.total === file.length)).toBe(true);
    expect(equal(entries.get(url) ?? null, file)).toBe(true);
    expect(net.requests).toEqual([url]);
    expect(handoff.releaseAll()).toBe(file.length);
  });

  it('a cached file is handed off without the network', async () => {
    const net = host({});
    const { handoff, progress } = recordingHandoff();
    const fetchModel = modelFetch(net.fetch, fakeCache(new Map([[url, file]])), () => handoff);
    const { buffer } = await transformersRead(await fetchModel(url));
    expect(buffer.byteLength).toBe(file.length);
    expect(equal(handoff.claim(buffer), file)).toBe(true);
    expect(progress).toEqual([{ url, loaded: file.length, total: file.length }]);
    expect(net.requests).toEqual([]);
  });

  it('a download the cache refuses fails the read; nothing is stored or deposited', async () => {
    const entries = new Map<string, Uint8Array>();
    const handoff = new ModelHandoff();
    const fetchModel = modelFetch(host({ 'onnx/model.onnx': file }).fetch, fakeCache(entries, true), () => handoff);
    await expect(transformersRead(await fetchModel(url))).rejects.toThrow(/corrupt/);
    expect(entries.size).toBe(0);
    expect(handoff.releaseAll()).toBe(0);
  });

  it('a body cancelled unread (a size check) cancels the download; nothing is deposited', async () => {
    const net = host({ 'onnx/model.onnx': file });
    const handoff = new ModelHandoff();
    const response = await modelFetch(net.fetch, null, () => handoff)(url);
    expect(response.headers.get('content-length')).toBe(String(file.length));
    await response.body!.cancel('headers only');
    expect(net.cancelled()).toEqual([url]);
    expect(handoff.releaseAll()).toBe(0);
  });

  it('a file that is not a graph, or a fetch outside a load, gets its real body', async () => {
    const tokenizer = pattern(1000, 7);
    const net = host({ 'tokenizer.json': tokenizer, 'onnx/model.onnx': file });
    const handoff = new ModelHandoff();
    const during = modelFetch(net.fetch, null, () => handoff);
    expect(equal((await transformersRead(await during(`${BASE}tokenizer.json`))).buffer, tokenizer)).toBe(true);
    const outside = modelFetch(net.fetch, null);
    expect(currentHandoff()).toBeNull();
    expect(equal((await transformersRead(await outside(url))).buffer, file)).toBe(true);
    expect(handoff.releaseAll()).toBe(0);
  });
});

describe('withSessionRewrites with a handoff, in onnxruntime-web', () => {
  let ort: OrtWeb;
  const ONNX = join(DEFAULT_MODELS_DIR, SPEC.name, 'onnx');
  const bytesOf = (file: string) => new Uint8Array(readFileSync(join(ONNX, file)));

  beforeAll(async () => {
    await generateModels({ only: 'tiny' }); // no-op when the stamp is current
    ort = await loadOrtWeb();
  });

  /** The logits of a 3-token prompt from an empty cache. */
  const logits = (session: OrtSession, float16: boolean) => promptLogits(ort, session, [1, 17, 42], { kvHeads: SPEC.numKeyValueHeads, headDim: SPEC.headDim }, float16);

  for (const [graph, data] of [
    ['model.onnx', null],
    ['model_fp16.onnx', 'model_fp16.onnx_data'],
  ] as const) {
    it(`${graph}${data ? ` with ${data}` : ''}: the session made from tickets gives the logits of the files; every buffer is released`, async () => {
      const files: Record<string, Uint8Array> = { [`onnx/${graph}`]: bytesOf(graph) };
      if (data) files[`onnx/${data}`] = bytesOf(data);
      const fetchModel = modelFetch(host(files).fetch, null);
      const factory = ort.InferenceSession;
      const create = factory.create;
      const handoff = new ModelHandoff();
      const reads: Uint8Array[] = [];
      // As transformers.js does: each file read with readResponse, the graph's buffer given to create, its data as externalData.
      const read = async (name: string) => {
        const { buffer } = await transformersRead(await fetchModel(`${BASE}onnx/${name}`));
        reads.push(buffer);
        return buffer;
      };
      const { value: session, report } = await withSessionRewrites(
        factory,
        async () => {
          const model = await read(graph);
          const externalData = data ? [{ path: data, data: await read(data) }] : undefined;
          // What transformers.js holds is a ticket and zeros, not the file.
          for (const r of reads) expect(r.subarray(r.indexOf(0)).every((b) => b === 0)).toBe(true);
          return factory.create(model, externalData ? { externalData } : {});
        },
        handoff,
      );
      expect(factory.create).toBe(create);
      expect(report.released).toBe(Object.values(files).reduce((n, f) => n + f.byteLength, 0));
      expect(reads.every((r) => r.byteLength === 0)).toBe(true);
      expect(handoff.releaseAll()).toBe(0);
      // The same rewrites from the files themselves, without a handoff (float16 logits depend on the rewritten graph's rounding).
      const { value: reference } = await withSessionRewrites(factory, () => factory.create(bytesOf(graph), data ? { externalData: [{ path: data, data: bytesOf(data) }] } : {}));
      const float16 = graph.includes('fp16');
      expect(await logits(session, float16)).toEqual(await logits(reference, float16));
      await session.release();
      await reference.release();
    });
  }

  it('a failed load releases what was deposited, and puts the factory back', async () => {
    const broken = bytesOf('model.onnx');
    broken.set(Buffer.from('MutMal'), Buffer.from(broken).indexOf(Buffer.from('MatMul')));
    const fetchModel = modelFetch(host({ 'onnx/model.onnx': broken }).fetch, null);
    const factory = ort.InferenceSession;
    const create = factory.create;
    const handoff = new ModelHandoff();
    let deposited: Uint8Array | null = null;
    await expect(
      withSessionRewrites(
        factory,
        async () => {
          const { buffer } = await transformersRead(await fetchModel(`${BASE}onnx/model.onnx`));
          deposited = handoff.claim(buffer);
          expect(equal(deposited, broken)).toBe(true);
          return factory.create(buffer, {});
        },
        handoff,
      ),
    ).rejects.toThrow();
    expect(factory.create).toBe(create);
    expect(deposited!.byteLength).toBe(0);
  });
});
