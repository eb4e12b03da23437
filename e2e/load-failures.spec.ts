import { expect, test, type Page } from '@playwright/test';
import { STRICT_CSP } from './support/csp.ts';
import { DIST, EXTRA_PORT, GENERATED, MIRROR } from './support/env.ts';
import { closedPort, startModelHost, type ModelHost } from './support/model-host.ts';
import { startStatic } from './support/static-server.ts';

/**
 * A load failure names its true cause, on the page and in the facade's error: each cause is
 * produced for real (a closed port, a 404, a host without CORS, a hidden file, an adapter without
 * shader-f16, a graph with an operator no backend has) and the built page is driven as a user would.
 */
const MODEL = 'tiny-random-llama';

interface Failure {
  code: string;
  status: number;
  message: string;
  details: Record<string, unknown>;
}

async function failedLoad(page: Page, query: string): Promise<Failure> {
  await page.goto(`/?${query}`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'failed');
  const error = await page.evaluate(() =>
    (window as any).jev.ready.then(
      () => null,
      (e: any) => ({ code: e.code, status: e.status, message: e.message, details: e.details ?? {} }),
    ),
  );
  expect(error, 'the load must fail').not.toBeNull();
  expect(error.code).toBe('model_load_failed');
  // The page says what the facade says.
  await expect(page.getByTestId('engine-status')).toContainText(error.message.slice(0, 60));
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-reason', error.details['reason']);
  return error;
}

/** What none of the network failures may show: the old, untrue words and a full bar for nothing. */
async function noFalseClaims(page: Page) {
  const panel = page.locator('.model-panel');
  await expect(panel).not.toContainText('WebGPU failed');
  await expect(panel).not.toContainText('offers none of the ONNX files');
  await expect(panel).not.toContainText('0 B of 0 B');
  await expect(page.getByTestId('progress-total')).toHaveCount(0);
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

test('a host that cannot be reached is named, with ?host= and the offline cache as ways out; no WebGPU fallback', async ({ page }) => {
  const host = `http://127.0.0.1:${await closedPort()}`;
  // device and dtype left at auto, as a new user would.
  const error = await failedLoad(page, q({ model: MODEL, host }));
  expect(error.details).toMatchObject({ reason: 'host_unreachable', host, url: `${host}/${MODEL}/resolve/main/config.json` });
  expect(error.status).toBe(503);
  expect(error.message).toContain(`${host} cannot be reached`);
  expect(error.message).toContain('?host=');
  expect(error.message).toContain('Stored in this browser');
  await noFalseClaims(page);
});

test('a model the host does not have: 404 on config.json', async ({ page }) => {
  const error = await failedLoad(page, q({ model: 'nobody/no-such-model', host: MIRROR }));
  expect(error.details).toMatchObject({ reason: 'model_not_found', status: 404, file: 'config.json', host: MIRROR });
  expect(error.message).toContain('nobody/no-such-model does not exist');
  await noFalseClaims(page);
});

test('?host= pointed at a web app (this page answers every path with itself): not a model host', async ({ page, baseURL }) => {
  const error = await failedLoad(page, q({ model: MODEL, host: baseURL!, device: 'wasm' }));
  expect(error.details).toMatchObject({ reason: 'host_error', file: 'config.json', status: 200 });
  expect(error.message).toContain('not JSON (text/html)');
  expect(error.message).toContain('does not look like a model host');
  await noFalseClaims(page);
});

test.describe('hosts that answer badly', () => {
  let host: ModelHost | null = null;
  test.afterEach(async () => {
    await host?.close();
    host = null;
  });

  test('a host that answers without CORS headers: CORS refused, not "unreachable"', async ({ page }) => {
    host = await startModelHost([GENERATED], 0, { cors: false });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url }));
    expect(error.details).toMatchObject({ reason: 'cors_refused', host: host.url });
    expect(error.message).toContain('Access-Control-Allow-Origin');
    // It did answer: the request reached it.
    expect(host.requests.some((r) => r.endsWith(`/${MODEL}/resolve/main/config.json`))).toBe(true);
    await noFalseClaims(page);
  });

  test("a host the page's Content-Security-Policy does not allow: CSP refused, naming connect-src", async ({ page }) => {
    host = await startModelHost([GENERATED], 0);
    // The strict policy allows the mirror only; this host is another origin.
    const site = await startStatic(DIST, EXTRA_PORT.cspSite, { 'Content-Security-Policy': STRICT_CSP });
    try {
      await page.goto(`${site.url}/?${q({ model: MODEL, host: host.url, device: 'wasm' })}`);
      await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'failed');
      const error = await page.evaluate(() => (window as any).jev.ready.then(() => null, (e: any) => ({ code: e.code, message: e.message, details: e.details })));
      expect(error).toMatchObject({ code: 'model_load_failed', details: { reason: 'csp_refused', host: host.url } });
      expect(error.message).toContain('connect-src');
      await expect(page.getByTestId('engine-status')).toHaveAttribute('data-reason', 'csp_refused');
      expect(host.requests, 'the request never left the browser').toEqual([]);
    } finally {
      await site.close();
    }
  });

  test('a model whose host answers but offers no ONNX file at all: no_model_files (the one case those words are true)', async ({ page }) => {
    host = await startModelHost([GENERATED], 0, { hide: (p) => p.startsWith(`${MODEL}/onnx/`) });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, device: 'wasm' }));
    expect(error.details).toMatchObject({ reason: 'no_model_files', host: host.url });
    expect(error.message).toContain('offers none of the ONNX files');
    expect(error.message).toContain('onnx/model_q4.onnx');
  });

  test('a missing ONNX file of the dtype asked for names the file and what the model offers', async ({ page }) => {
    host = await startModelHost([GENERATED], 0, { hide: (p) => p === `${MODEL}/onnx/model_q4.onnx` });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, device: 'wasm', dtype: 'q4' }));
    expect(error.details).toMatchObject({ reason: 'file_missing', file: 'onnx/model_q4.onnx', dtype: 'q4', status: 404 });
    expect(error.details['offered']).toContain('fp32');
    expect(error.details['offered']).not.toContain('q4');
    expect(error.message).toContain('has no onnx/model_q4.onnx');
    await noFalseClaims(page);
  });

  test("a missing external data file (model_fp16.onnx_data) is named as the dtype's missing file", async ({ page }) => {
    host = await startModelHost([GENERATED], 0, { hide: (p) => p === `${MODEL}/onnx/model_fp16.onnx_data` });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, device: 'wasm', dtype: 'fp16' }));
    expect(error.details).toMatchObject({ reason: 'file_missing', file: 'onnx/model_fp16.onnx_data', dtype: 'fp16' });
    expect(error.details['offered']).not.toContain('fp16');
  });

  test('a download that breaks off halfway, from a host that answers: download_failed, not "unreachable"', async ({ page }) => {
    host = await startModelHost([GENERATED], 0, { breakOff: (p) => p === `${MODEL}/onnx/model.onnx` });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, device: 'wasm', dtype: 'fp32' }));
    expect(error.details).toMatchObject({ reason: 'download_failed', host: host.url, dtype: 'fp32' });
    expect(error.message).toContain('broke off');
  });

  test('a download that does not match the SHA-256 its host states is refused as corrupt, and not stored', async ({ page }) => {
    host = await startModelHost([GENERATED], 0, { headers: (p): Record<string, string> => (p === `${MODEL}/onnx/model.onnx` ? { 'X-Linked-ETag': `"${'0'.repeat(64)}"` } : {}) });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, device: 'wasm', dtype: 'fp32' }));
    const url = `${host.url}/${MODEL}/resolve/main/onnx/model.onnx`;
    expect(error.details).toMatchObject({ reason: 'file_corrupt', url, host: host.url });
    expect(error.message).toContain(`states ${'0'.repeat(64)}`);
    const stored = await page.evaluate(async () => (await (await caches.open('transformers-cache')).keys()).map((r) => r.url));
    expect(stored).not.toContain(url);
  });

  test('a graph with an operator no backend has is refused at load time, on wasm, naming it', async ({ page }) => {
    // The same bytes with the op type Sigmoid renamed (same length, so the protobuf stays valid).
    host = await startModelHost([GENERATED], 0, {
      rewrite: (p, body) => (p === `${MODEL}/onnx/model.onnx` ? Buffer.from(body.toString('latin1').replaceAll('Sigmoid', 'Sigmaid'), 'latin1') : body),
    });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, device: 'wasm', dtype: 'fp32' }));
    expect(error.details).toMatchObject({ reason: 'unsupported_format', dtype: 'fp32', device: 'wasm' });
    expect(error.message).toContain('Sigmaid');
  });

  test('with device auto, that graph fails WebGPU, a fault of the device: it falls back to wasm, says so, and fails there too', async ({ page }) => {
    await page.goto('/?model=none&host=http://127.0.0.1:1');
    const gpu = await page.evaluate(async () => !!(await (navigator as any).gpu?.requestAdapter()));
    test.skip(!gpu, 'this browser has no WebGPU adapter: nothing to fall back from');
    host = await startModelHost([GENERATED], 0, {
      rewrite: (p, body) => (p === `${MODEL}/onnx/model.onnx` ? Buffer.from(body.toString('latin1').replaceAll('Sigmoid', 'Sigmaid'), 'latin1') : body),
    });
    const error = await failedLoad(page, q({ model: MODEL, host: host.url, dtype: 'fp32' }));
    expect(error.details).toMatchObject({ reason: 'unsupported_format', device: 'wasm' });
    const panel = page.locator('.model-panel');
    await expect(panel).toContainText('WebGPU failed (');
    await expect(panel).toContainText('so the engine falls back to wasm');
    // The files came in, the load failed: the bar says so, and is not shown as a finished download.
    await expect(page.getByTestId('load-progress')).toHaveAttribute('data-complete', 'false');
    await expect(page.getByTestId('load-progress')).toContainText('Download stopped');
  });
});

test('a format the adapter cannot run (q4f16 on WebGPU without shader-f16) is refused, naming one that works', async ({ page }) => {
  await page.goto('/?model=none&host=http://127.0.0.1:1');
  const adapter = await page.evaluate(async () => {
    const a = await (navigator as any).gpu?.requestAdapter();
    return a ? { f16: a.features.has('shader-f16') } : null;
  });
  test.skip(adapter === null, 'this browser has no WebGPU adapter');
  test.skip(adapter!.f16, 'this adapter has shader-f16: q4f16 runs on it');
  const error = await failedLoad(page, q({ model: MODEL, host: MIRROR, device: 'webgpu', dtype: 'q4f16' }));
  expect(error.details).toMatchObject({ reason: 'unsupported_format', dtype: 'q4f16', device: 'webgpu' });
  expect(['q4', 'fp32', 'q8']).toContain(error.details['instead']);
  expect(error.message).toContain('shader-f16');
  expect(error.message).toContain(`use dtype ${error.details['instead']}`);
});
