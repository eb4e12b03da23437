import { describe, expect, it } from 'vitest';
import { ALL_DTYPES, MAX_OFFERED_BYTES, MODEL_REGISTRY, dtypesOf, dataChunksOf, findRegistryModel, type Dtype } from '../../src/ui/model/model-registry.ts';

/**
 * The download per dtype, added up by hand from the hub listings quoted above each entry
 * (graph + every `_data` chunk, decimal units), independently of the registry's expressions.
 */
const EXPECTED_TOTALS: Record<string, Partial<Record<Dtype, number>>> = {
  'HuggingFaceTB/SmolLM2-135M-Instruct': { q4f16: 134e6, q4: 200e6, fp16: 327e6, fp32: 654e6 },
  'HuggingFaceTB/SmolLM2-360M-Instruct': { q4f16: 299e6, q4: 417e6, fp16: 819e6, fp32: 1640e6 },
  'onnx-community/Qwen2.5-0.5B-Instruct': { q4f16: 483e6, q8: 512e6, q4: 786e6, fp16: 997e6, fp32: 1990e6 },
  'onnx-community/Llama-3.2-1B-Instruct': { q4f16: 1070e6, q8: 1240e6, q4: 1660e6, fp16: 2_470_532_000 },
  'HuggingFaceTB/SmolLM2-1.7B-Instruct': { q4f16: 1110e6, q4: 1410e6, q8: 1710e6, fp16: 3430e6 },
  'onnx-community/Phi-3.5-mini-instruct-onnx-web': { q4f16: 2320e6 },
  'onnx-community/Llama-3.2-3B-Instruct': { q4f16: 2_370_966_000, q4: 3_340_951_000 },
  'onnx-community/Phi-4-mini-instruct-web-q4f16': { q4f16: 3_410_291_000 },
};

const offered = (files: Partial<Record<Dtype, number>>) => ALL_DTYPES.filter((d) => files[d] !== undefined);

describe('model registry', () => {
  it('lists exactly the checked models, each once', () => {
    expect(MODEL_REGISTRY.map((m) => m.id).sort()).toEqual(Object.keys(EXPECTED_TOTALS).sort());
    for (const m of MODEL_REGISTRY) expect(m.id).toMatch(/^[\w.-]+\/[\w.-]+$/);
  });

  it('sizes are the graph plus its external data, as the listings give them', () => {
    for (const m of MODEL_REGISTRY) {
      const expected = EXPECTED_TOTALS[m.id]!;
      expect(offered(m.files), m.id).toEqual(offered(expected));
      for (const d of offered(expected)) {
        // 1 byte of slack for floating-point products like 1.64 * 1e9.
        expect(Math.abs(m.files[d]! - expected[d]!), `${m.id} ${d}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('external data belongs to an offered dtype and leaves a graph of positive size', () => {
    let withData = 0;
    for (const m of MODEL_REGISTRY) {
      for (const [d, chunks] of Object.entries(m.externalData ?? {}) as [Dtype, readonly number[]][]) {
        withData++;
        expect(m.files[d], `${m.id} ${d}`).toBeDefined();
        expect(chunks.length).toBeGreaterThan(0);
        for (const c of chunks) expect(c).toBeGreaterThan(0);
        const graph = m.files[d]! - chunks.reduce((a, b) => a + b, 0);
        expect(graph, `${m.id} ${d} graph bytes`).toBeGreaterThan(0);
      }
    }
    // The hub's larger exports keep their weights beside the graph; the registry must say so.
    expect(withData).toBeGreaterThanOrEqual(5);
  });

  it('counts external-data chunks per dtype (transformers.js names them _data, _data_1, …)', () => {
    const phi4 = findRegistryModel('onnx-community/Phi-4-mini-instruct-web-q4f16')!;
    expect(dataChunksOf(phi4, 'q4f16')).toBe(2);
    const smol17 = findRegistryModel('HuggingFaceTB/SmolLM2-1.7B-Instruct')!;
    expect(dataChunksOf(smol17, 'fp16')).toBe(1);
    expect(dataChunksOf(smol17, 'q4')).toBe(0);
    expect(dataChunksOf(findRegistryModel('HuggingFaceTB/SmolLM2-135M-Instruct')!, 'fp32')).toBe(0);
  });

  it('offers nothing above the size cap (the fp32 files of the larger models are left out)', () => {
    for (const m of MODEL_REGISTRY) {
      for (const d of offered(m.files)) expect(m.files[d]!, `${m.id} ${d}`).toBeLessThanOrEqual(MAX_OFFERED_BYTES);
    }
    expect(findRegistryModel('HuggingFaceTB/SmolLM2-1.7B-Instruct')!.files.fp32).toBeUndefined();
    expect(findRegistryModel('onnx-community/Llama-3.2-1B-Instruct')!.files.fp32).toBeUndefined();
  });

  it('a model with only float16 files needs WebGPU; one with a q4, q8 or fp32 file does not', () => {
    for (const m of MODEL_REGISTRY) {
      const onlyF16 = offered(m.files).every((d) => d === 'q4f16' || d === 'fp16');
      expect(m.webgpu === 'required', m.id).toBe(onlyF16);
    }
  });

  it('dtypesOf offers the registry dtypes best-first, and every dtype for an unknown model', () => {
    expect(dtypesOf('HuggingFaceTB/SmolLM2-1.7B-Instruct')).toEqual(['q4f16', 'q4', 'q8', 'fp16']);
    expect(dtypesOf('onnx-community/Phi-4-mini-instruct-web-q4f16')).toEqual(['q4f16']);
    expect(dtypesOf('someone/unknown-model')).toEqual(ALL_DTYPES);
    expect(findRegistryModel('someone/unknown-model')).toBeUndefined();
  });
});
