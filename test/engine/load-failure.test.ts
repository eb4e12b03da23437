import { createServer, type Server } from 'node:http';
import { ModelRegistry } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startModelHost, type ModelHost } from '../../e2e/support/model-host.ts';
import { JevError } from '../../src/contract/index.ts';
import { Engine } from '../../src/engine/engine.ts';
import { externalDataFiles } from '../../src/engine/load/external-data.ts';
import { httpSource } from '../../src/engine/load/http-source.ts';
import { classifyLoadError, deviceMayFallBack, loadFailureReason, statusFailure, unansweredFailure, type Probe } from '../../src/engine/load/load-failure.ts';
import { DTYPE_FILES } from '../../src/engine/load/load-model.ts';
import type { LoadOptions } from '../../src/protocol/engine-api.ts';
import { GENERATED, TINY } from '../support/models.ts';

const MODEL = 'org/tiny';
const BASE = `http://models.test/${MODEL}/resolve/main/`;
const ctx = { model: MODEL, base: BASE };
const never: Probe = async () => {
  throw new Error('the probe must not run here');
};

function details(e: JevError): Record<string, unknown> {
  expect(e.code).toBe('model_load_failed');
  return e.details ?? {};
}

describe('load failures name their cause', () => {
  it('a model the host lacks: config.json answers 404, or 401 as the hub answers for a missing repository', () => {
    for (const status of [404, 401]) {
      const e = statusFailure(`${BASE}config.json`, status, ctx);
      expect(details(e)).toMatchObject({ reason: 'model_not_found', host: 'http://models.test', file: 'config.json', status });
      expect(e.message).toContain(`${MODEL} does not exist at http://models.test`);
      expect(e.message).toContain('?model=');
    }
  });

  it('a file the chosen dtype needs answers 404: names the file and what the model offers', () => {
    const e = statusFailure(`${BASE}onnx/model_q4.onnx_data`, 404, { ...ctx, dtype: 'q4', offered: ['fp32', 'q8'] });
    expect(details(e)).toMatchObject({ reason: 'file_missing', file: 'onnx/model_q4.onnx_data', dtype: 'q4', offered: ['fp32', 'q8'] });
    expect(e.param).toBe('dtype');
    expect(e.message).toContain('has no onnx/model_q4.onnx_data, which dtype q4 needs');
    expect(e.message).toContain('The model offers fp32, q8');
  });

  it('any other HTTP status is a fault of the host, not of the model', () => {
    const e = statusFailure(`${BASE}config.json`, 503, ctx);
    expect(details(e)).toMatchObject({ reason: 'host_error', status: 503 });
    expect(e.message).toContain('HTTP 503');
  });

  it('no answer: the host cannot be reached, names it and points to ?host= and the offline cache', async () => {
    const e = await unansweredFailure(`${BASE}config.json`, new TypeError('Failed to fetch'), ctx, async () => 'unreachable');
    expect(details(e)).toMatchObject({ reason: 'host_unreachable', host: 'http://models.test', url: `${BASE}config.json` });
    expect(e.param).toBe('host');
    expect(e.message).toMatch(/^http:\/\/models\.test cannot be reached/);
    expect(e.message).toContain('?host=');
    expect(e.message).toContain('npm run fetch-model');
    expect(e.message).toContain('Stored in this browser');
  });

  it('says retriable only where the network or the host may recover: unreachable, a host error; not a missing model or file', async () => {
    expect(statusFailure(`${BASE}config.json`, 503, ctx).retriable).toBe(true);
    expect(statusFailure(`${BASE}config.json`, 404, ctx).retriable).toBe(false);
    expect(statusFailure(`${BASE}onnx/model_q4.onnx_data`, 404, { ...ctx, dtype: 'q4' }).retriable).toBe(false);
    const unreachable = await unansweredFailure(`${BASE}config.json`, new TypeError('Failed to fetch'), ctx, async () => 'unreachable');
    expect(unreachable.retriable).toBe(true);
    expect(unreachable.toBody().error.retriable).toBe(true);
  });

  it('no answer where the probe saw one: CORS refused; or the page policy stopped it: CSP', async () => {
    const cors = await unansweredFailure(`${BASE}config.json`, new TypeError('Failed to fetch'), ctx, async () => 'cors');
    expect(details(cors)).toMatchObject({ reason: 'cors_refused', host: 'http://models.test' });
    expect(cors.message).toContain('Access-Control-Allow-Origin');
    const csp = await unansweredFailure(`${BASE}config.json`, new TypeError('Failed to fetch'), ctx, async () => 'csp');
    expect(details(csp)).toMatchObject({ reason: 'csp_refused' });
    expect(csp.message).toContain('connect-src');
  });

  it("Node's fetch names the network fault: unreachable, without a probe", async () => {
    const error = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const e = await unansweredFailure(`${BASE}config.json`, error, ctx, never);
    expect(details(e)).toMatchObject({ reason: 'host_unreachable' });
    expect(e.message).toContain('ECONNREFUSED');
  });

  it("reads transformers.js' own errors: 404 as file_missing, a 5xx as host_error, a bare TypeError by probing the model's folder", async () => {
    const notFound = Object.assign(new Error(`Could not locate file: "${BASE}tokenizer.json".`), { name: 'ModelFileNotFoundError', status: 404 });
    expect(details(await classifyLoadError(notFound, ctx, never))).toMatchObject({ reason: 'file_missing', file: 'tokenizer.json' });
    const server = new Error(`Internal server error error occurred while trying to load file: "${BASE}onnx/model.onnx".`);
    expect(details(await classifyLoadError(server, ctx, never))).toMatchObject({ reason: 'host_error', status: 500, file: 'onnx/model.onnx' });
    const probed: string[] = [];
    const unreachable = await classifyLoadError(new TypeError('Failed to fetch'), ctx, async (url) => (probed.push(url), 'unreachable'));
    expect(details(unreachable)).toMatchObject({ reason: 'host_unreachable' });
    expect(probed).toEqual([`${BASE}config.json`]);
    // The folder answers (with CORS), yet a download broke off: not "CORS refused".
    const brokeOff = await classifyLoadError(new TypeError('Failed to fetch'), ctx, async () => 'cors');
    expect(details(brokeOff)).toMatchObject({ reason: 'download_failed' });
  });

  it('an operator the backend lacks is unsupported_format; anything unknown keeps its words as load_error; a JevError passes', async () => {
    const op = await classifyLoadError(new Error("Could not find an implementation for GroupQueryAttention(1) node with name 'gqa_0'"), { ...ctx, dtype: 'q4', device: 'wasm', suggestDtype: () => 'fp32' }, never);
    expect(details(op)).toMatchObject({ reason: 'unsupported_format', dtype: 'q4', device: 'wasm', instead: 'fp32' });
    expect(op.message).toContain('Use dtype fp32 instead');
    const odd = await classifyLoadError(new Error('something odd'), { ...ctx, dtype: 'fp32', device: 'wasm' }, never);
    expect(details(odd)).toMatchObject({ reason: 'load_error' });
    expect(odd.message).toContain('something odd');
    const own = new JevError('model_load_failed', 'mine', { details: { reason: 'unsupported_format' } });
    expect(await classifyLoadError(own, ctx, never)).toBe(own);
  });

  it('only a fault of the device may fall back from WebGPU to wasm', async () => {
    for (const status of [404, 503]) expect(deviceMayFallBack(statusFailure(`${BASE}config.json`, status, ctx))).toBe(false);
    expect(deviceMayFallBack(await unansweredFailure(`${BASE}config.json`, new TypeError('Failed to fetch'), ctx, async () => 'unreachable'))).toBe(false);
    expect(deviceMayFallBack(await unansweredFailure(`${BASE}config.json`, new TypeError('Failed to fetch'), ctx, async () => 'cors'))).toBe(false);
    expect(deviceMayFallBack(await classifyLoadError(new Error('Could not find an implementation for Foo(1)'), ctx, never))).toBe(true);
    expect(deviceMayFallBack(new Error('WebGPU validation error'))).toBe(true);
    expect(loadFailureReason(new Error('x'))).toBe(null);
  });
});

describe('external data', () => {
  const forms: unknown[] = [true, false, 2, { 'model_fp16.onnx': 2, model: 1 }, { 'model_q4f16.onnx': 3 }, { model: 1 }];
  it('names the same _data files transformers.js 4.3.1 reads (ModelRegistry.get_model_files), for every dtype and form', async () => {
    for (const use_external_data_format of forms) {
      const config = { model_type: 'llama', 'transformers.js_config': { use_external_data_format } };
      for (const [dtype, file] of Object.entries(DTYPE_FILES)) {
        const theirs = (await ModelRegistry.get_model_files(MODEL, { config: config as never, dtype: dtype as never })).filter((f: string) => f.includes('_data'));
        expect(externalDataFiles(config, `onnx/${file}`), `${JSON.stringify(use_external_data_format)} ${dtype}`).toEqual(theirs);
      }
    }
    expect(externalDataFiles({ model_type: 'llama' }, 'onnx/model.onnx')).toEqual([]);
  });

  it('refuses a chunk count transformers.js would refuse', () => {
    expect(() => externalDataFiles({ 'transformers.js_config': { use_external_data_format: 101 } }, 'onnx/model.onnx')).toThrow(/use_external_data_format/);
  });
});

describe('httpSource against real servers', () => {
  let server: Server;
  let url: string;
  const files = new Map<string, string>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const body = files.get(path);
      if (path.startsWith('/broken/')) return void res.writeHead(502).end();
      if (path.startsWith('/webapp/')) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>app</title>');
      if (body === undefined) return void res.writeHead(404).end('Entry not found');
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(req.method === 'HEAD' ? undefined : body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const config = JSON.stringify({ model_type: 'llama', 'transformers.js_config': { use_external_data_format: { 'model_fp16.onnx': 1 } } });
    files.set(`/${MODEL}/resolve/main/config.json`, config);
    files.set(`/${MODEL}/resolve/main/onnx/model.onnx`, 'g');
    files.set(`/${MODEL}/resolve/main/onnx/model_fp16.onnx`, 'g');
    files.set(`/${MODEL}/resolve/main/onnx/model_q4.onnx`, 'g');
    // fp16's weights are beside it; model_q4 has no _data and needs none.
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const options = (host: string, model = MODEL): LoadOptions => ({ model, host, device: 'wasm', dtype: 'auto' });

  it('a graph counts as offered only with the external data config.json declares for it', async () => {
    const source = httpSource(options(url), { cacheName: null, probe: never });
    await source.check();
    expect(await source.has('model.onnx')).toBe(true);
    expect(await source.has('model_q4.onnx')).toBe(true);
    expect(await source.has('model_fp16.onnx')).toBe(false);
    expect(await source.missing('model_fp16.onnx')).toEqual(['onnx/model_fp16.onnx_data']);
    files.set(`/${MODEL}/resolve/main/onnx/model_fp16.onnx_data`, 'w');
    expect(await httpSource(options(url), { cacheName: null, probe: never }).has('model_fp16.onnx')).toBe(true);
  });

  it('check() fails with the cause: a missing model, a closed port, a host error', async () => {
    const missing = await httpSource(options(url, 'nobody/nothing'), { cacheName: null, probe: never }).check().catch((e: JevError) => e);
    expect(details(missing as JevError)).toMatchObject({ reason: 'model_not_found', status: 404 });
    // A port nothing listens on: bind one, then close it.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await httpSource(options(`http://127.0.0.1:${port}`), { cacheName: null, probe: never }).check().catch((e: JevError) => e);
    expect(details(unreachable as JevError)).toMatchObject({ reason: 'host_unreachable', host: `http://127.0.0.1:${port}` });
    const broken = await httpSource(options(url, 'broken/model'), { cacheName: null, probe: never }).check().catch((e: JevError) => e);
    expect(details(broken as JevError)).toMatchObject({ reason: 'host_error', status: 502 });
    // A web app answering every path with its page: not a model host.
    const page = await httpSource(options(url, 'webapp/x'), { cacheName: null, probe: never }).check().catch((e: JevError) => e);
    expect(details(page as JevError)).toMatchObject({ reason: 'host_error', status: 200, file: 'config.json' });
    expect((page as JevError).message).toContain('not JSON (text/html)');
  });
});

describe('the engine loading over HTTP (Node, onnxruntime-node) names the cause', () => {
  let host: ModelHost;
  beforeAll(async () => {
    host = await startModelHost([GENERATED], 0, { hide: (p) => p === `${TINY}/onnx/model_q4.onnx` || p === `${TINY}/onnx/model_fp16.onnx_data` });
  });
  afterAll(() => host.close());
  const load = (engine: Engine, options: Partial<LoadOptions>) =>
    engine.load({ model: TINY, host: host.url, device: 'auto', dtype: 'auto', ...options }).then(
      () => null,
      (e: JevError) => e,
    );

  it('a closed port, a missing model, a missing graph and a missing _data; the status keeps the words', async () => {
    const engine = new Engine({ runtime: {}, isNode: true });
    const port = await closedPort();
    const unreachable = (await load(engine, { host: `http://127.0.0.1:${port}` }))!;
    expect(details(unreachable)).toMatchObject({ reason: 'host_unreachable', host: `http://127.0.0.1:${port}` });
    expect((await engine.status()).error).toBe(unreachable.message);
    expect(details((await load(engine, { model: 'nobody/nothing' }))!)).toMatchObject({ reason: 'model_not_found' });
    const q4 = (await load(engine, { dtype: 'q4' }))!;
    expect(details(q4)).toMatchObject({ reason: 'file_missing', file: 'onnx/model_q4.onnx', dtype: 'q4' });
    expect(q4.details?.['offered']).toEqual(expect.arrayContaining(['fp32', 'q8']));
    expect(q4.details?.['offered']).not.toContain('fp16');
    const fp16 = (await load(engine, { dtype: 'fp16' }))!;
    expect(details(fp16)).toMatchObject({ reason: 'file_missing', file: 'onnx/model_fp16.onnx_data' });
    // None of these requests fetched a graph: each failure was found before any download.
    expect(host.requests.filter((r) => r.startsWith('GET') && r.includes('/onnx/'))).toEqual([]);
  });
});
