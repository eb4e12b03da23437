/**
 * A model file's graph read without its weights (src/server/externalize-file.ts): byte for byte
 * what engine/graph/externalize-weights.ts makes from the whole file's bytes (itself checked
 * against an independent ONNX decoder in test/engine/externalize-weights.test.ts), for every
 * inline generated format and the real TinyStories-656K export, at two
 * bounds; null for a graph whose weights are external already; run in onnxruntime-node with the
 * file's folder, the logits of the file itself; a truncated file is an error, not a graph.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { externalizeWeights, MIN_EXTERNAL_BYTES } from '../../src/engine/graph/externalize-weights.ts';
import { externalizeFile } from '../../src/server/externalize-file.ts';
import { GENERATED, TINY, TINYSTORIES, VENDORED } from '../support/models.ts';

const CASES = [
  join(GENERATED, TINY, 'onnx', 'model.onnx'),
  join(GENERATED, TINY, 'onnx', 'model_quantized.onnx'),
  join(GENERATED, TINY, 'onnx', 'model_q4.onnx'),
  join(GENERATED, TINY, 'onnx', 'model_q4f16.onnx'),
  join(VENDORED, TINYSTORIES, 'onnx', 'model.onnx'),
];

describe('externalizeFile', () => {
  for (const path of CASES) {
    it(`${path.split('/').slice(-3).join('/')}: what externalizeWeights makes of the whole file, at two bounds`, async () => {
      const whole = new Uint8Array(readFileSync(path));
      for (const bound of [MIN_EXTERNAL_BYTES, 64]) {
        const want = externalizeWeights(whole, 'model.onnx', bound)!.graph;
        const got = (await externalizeFile(path, 'model.onnx', bound))!;
        expect(got.byteLength).toBe(want.byteLength);
        expect(Buffer.compare(Buffer.from(got), Buffer.from(want))).toBe(0);
      }
    }, 60_000);
  }

  it('null where the weights are external already (model_fp16.onnx beside its model_fp16.onnx_data)', async () => {
    expect(await externalizeFile(join(GENERATED, TINY, 'onnx', 'model_fp16.onnx'), 'model_fp16.onnx')).toBeNull();
  });

  it('runs in onnxruntime-node with the file\'s folder as the file itself does', async () => {
    const path = join(GENERATED, TINY, 'onnx', 'model.onnx');
    const graph = (await externalizeFile(path, 'model.onnx'))!;
    expect(graph.byteLength).toBeLessThan(statSync(path).size / 4);
    const logits = async (model: string | Uint8Array, options: ort.InferenceSession.SessionOptions) => {
      const s = typeof model === 'string' ? await ort.InferenceSession.create(model, options) : await ort.InferenceSession.create(model, options);
      const ids = [3, 14, 15, 92];
      const feeds: Record<string, ort.Tensor> = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, 4]),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(4).fill(1n), [1, 4]),
        position_ids: new ort.Tensor('int64', BigInt64Array.from([0n, 1n, 2n, 3n]), [1, 4]),
      };
      for (const m of s.inputMetadata as unknown as { name: string; shape: (number | string)[] }[])
        if (m.name.startsWith('past_key_values')) feeds[m.name] = new ort.Tensor('float32', new Float32Array(0), m.shape.map((d, k) => (typeof d === 'number' ? d : k === 2 ? 0 : 1)));
      const out = (await s.run(feeds))['logits']!.data as Float32Array;
      await s.release();
      return out;
    };
    const want = await logits(path, {});
    const got = await logits(graph, { extra: { session: { model_external_initializers_file_folder_path: join(GENERATED, TINY, 'onnx') } } });
    expect(got.length).toBe(want.length);
    expect(Buffer.compare(Buffer.from(got.buffer), Buffer.from(want.buffer))).toBe(0);
  });

  it('a file cut short is an error naming where it ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'externalize-file-'));
    try {
      const path = join(dir, 'model.onnx');
      copyFileSync(join(GENERATED, TINY, 'onnx', 'model.onnx'), path);
      truncateSync(path, statSync(path).size - 100);
      await expect(externalizeFile(path, 'model.onnx')).rejects.toThrow(/ONNX model: .*(ends|past the end)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
