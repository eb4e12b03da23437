import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startModelHost, type ModelHost } from '../../e2e/support/model-host.ts';
import { startStatic } from '../../e2e/support/static-server.ts';
import { fetchModel } from '../../scripts/fetch-model.ts';
import { externalDataFiles } from '../../src/engine/load/external-data.ts';
import { GENERATED, TINY } from '../support/models.ts';

describe('npm run fetch-model', () => {
  let mirror: ModelHost;
  let out: string;
  beforeAll(async () => {
    mirror = await startModelHost([GENERATED]);
    out = mkdtempSync(join(tmpdir(), 'jev-fetch-'));
  });
  afterAll(async () => {
    await mirror.close();
    rmSync(out, { recursive: true, force: true });
  });

  it('downloads what a model needs into a folder in the hub layout, byte for byte', async () => {
    const files = await fetchModel({ model: TINY, host: mirror.url, out, dtypes: ['fp32', 'q8'] });
    expect(files.map((f) => f.file).sort()).toEqual(
      ['config.json', 'generation_config.json', 'onnx/model.onnx', 'onnx/model_quantized.onnx', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json'].sort(),
    );
    for (const f of files) {
      const original = readFileSync(join(GENERATED, TINY, f.file));
      const copy = readFileSync(join(out, TINY, 'resolve', 'main', f.file));
      expect(copy.equals(original), f.file).toBe(true);
      expect(f.sha256).toBe(createHash('sha256').update(original).digest('hex'));
    }
  });

  it('is served by a plain static server as a model host', async () => {
    // The folder itself is the host: a server mapping paths 1:1 answers {host}/{model}/resolve/main/{file}.
    const plain = await startStatic(out, 0, { 'Access-Control-Allow-Origin': '*' });
    try {
      const res = await fetch(`${plain.url}/${TINY}/resolve/main/onnx/model.onnx`);
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(GENERATED, TINY, 'onnx/model.onnx')))).toBe(true);
    } finally {
      await plain.close();
    }
  });

  it('copies a graph\'s external data (config.json use_external_data_format) from a plain mirror, byte for byte', async () => {
    const config = JSON.parse(readFileSync(join(GENERATED, TINY, 'config.json'), 'utf8'));
    const data = externalDataFiles(config, 'onnx/model_fp16.onnx');
    expect(data, 'the generated tiny model declares fp16 external data').toEqual(['onnx/model_fp16.onnx_data']);
    const dir = mkdtempSync(join(tmpdir(), 'jev-fetch-data-'));
    try {
      // The mirror has no /api/models listing: only config.json says that the _data file exists.
      const files = await fetchModel({ model: TINY, host: mirror.url, out: dir, dtypes: ['fp16'] });
      expect(files.map((f) => f.file).filter((f) => f.startsWith('onnx/')).sort()).toEqual(['onnx/model_fp16.onnx', 'onnx/model_fp16.onnx_data']);
      for (const f of ['onnx/model_fp16.onnx', 'onnx/model_fp16.onnx_data']) {
        const copy = readFileSync(join(dir, TINY, 'resolve', 'main', f));
        expect(copy.equals(readFileSync(join(GENERATED, TINY, f))), f).toBe(true);
        expect(files.find((x) => x.file === f)!.bytes).toBe(copy.byteLength);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a graph whose declared external data the host lacks, naming the file', async () => {
    const host = await startModelHost([GENERATED], 0, { hide: (p) => p === `${TINY}/onnx/model_fp16.onnx_data` });
    const dir = mkdtempSync(join(tmpdir(), 'jev-fetch-data-'));
    try {
      await expect(fetchModel({ model: TINY, host: host.url, out: dir, dtypes: ['fp16'] })).rejects.toThrow(/has onnx\/model_fp16\.onnx but not onnx\/model_fp16\.onnx_data/);
    } finally {
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a host that cannot be reached is named', async () => {
    const port = await closedPort();
    await expect(fetchModel({ model: TINY, host: `http://127.0.0.1:${port}`, out })).rejects.toThrow(new RegExp(`no answer from http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
  });

  it('refuses a model the host does not have, and an unknown dtype', async () => {
    await expect(fetchModel({ model: 'nobody/nothing', host: mirror.url, out })).rejects.toThrow(/config\.json/);
    await expect(fetchModel({ model: TINY, host: mirror.url, out, dtypes: ['int3'] })).rejects.toThrow(/Unknown dtype/);
  });
});
