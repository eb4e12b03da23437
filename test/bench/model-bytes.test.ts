import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fileBytes, modelBytes } from '../../bench/lib/model-bytes.ts';
import { generateModels } from '../../scripts/models/generate-models.ts';
import { GENERATED, TINY } from '../support/models.ts';

const size = (file: string) => statSync(join(GENERATED, TINY, 'onnx', file)).size;

describe('model_bytes of the memory rows', () => {
  beforeAll(async () => {
    await generateModels({ only: 'tiny' });
  });

  it('is the graph of the dtype, plus its external data where it has some', () => {
    expect(modelBytes([GENERATED], TINY, 'fp32')).toBe(size('model.onnx'));
    expect(modelBytes([GENERATED], TINY, 'q4')).toBe(size('model_q4.onnx'));
    // model_fp16.onnx keeps its weights in model_fp16.onnx_data, and model.onnx's size is not counted.
    expect(modelBytes([GENERATED], TINY, 'fp16')).toBe(size('model_fp16.onnx') + size('model_fp16.onnx_data'));
    expect(size('model_fp16.onnx_data')).toBeGreaterThan(size('model_fp16.onnx'));
  });

  it('looks in each root in turn and names what it could not find', () => {
    expect(modelBytes(['/nonexistent', GENERATED], TINY, 'q8')).toBe(size('model_quantized.onnx'));
    expect(() => modelBytes([GENERATED], 'no-such-model', 'fp32')).toThrow(/no onnx\/model\.onnx for no-such-model/);
  });

  it('gives the size of one file (the peer GGUF) from the first root that holds it', () => {
    expect(fileBytes(['/nonexistent', GENERATED], TINY, 'onnx/model_q4.onnx')).toBe(size('model_q4.onnx'));
    expect(() => fileBytes([GENERATED], TINY, 'gguf/none.gguf')).toThrow(/no gguf\/none\.gguf for/);
  });
});
