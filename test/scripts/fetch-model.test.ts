import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMirror, type Mirror } from '../../e2e/support/mirror-server.ts';
import { startStatic } from '../../e2e/support/static-server.ts';
import { fetchModel } from '../../scripts/fetch-model.ts';
import { GENERATED, TINY } from '../support/models.ts';

describe('npm run fetch-model', () => {
  let mirror: Mirror;
  let out: string;
  beforeAll(async () => {
    mirror = await startMirror([GENERATED]);
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

  it('refuses a model the host does not have, and an unknown dtype', async () => {
    await expect(fetchModel({ model: 'nobody/nothing', host: mirror.url, out })).rejects.toThrow(/config\.json/);
    await expect(fetchModel({ model: TINY, host: mirror.url, out, dtypes: ['int3'] })).rejects.toThrow(/Unknown dtype/);
  });
});
