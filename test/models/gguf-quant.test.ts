/**
 * The quantized GGUFs (gguf/model-q4_0.gguf, gguf/model-q8_0.gguf, scripts/models/gguf-quant.ts)
 * carry exactly the weights of the ONNX q4 and q8 files: every quantized tensor decoded the way
 * ggml does (dequantize_row_q4_0 / _q8_0) equals, bit for bit, the ONNX file's initializers decoded
 * the way MatMulNBits / MatMulInteger read them, read straight from the ONNX protobuf
 * (onnx-initializers.ts) — transposed to [out, in] and with llama.cpp's q/k row permutation.
 * Norms and the (tied) embedding are F32 and equal the f32 GGUF's.
 * (That llama.cpp computes with them as the engine does, within a measured bound, is gguf-wllama-quant.test.ts.)
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { GgmlType } from '../../scripts/models/gguf.ts';
import { type GgufFile, readGguf } from '../../scripts/models/gguf-read.ts';
import { GGUF_F32_FILE } from '../../scripts/models/gguf-llama.ts';
import { GGUF_Q4_0_FILE, GGUF_Q8_0_FILE, dequantizeGgufBlocks, ropeRowOrder } from '../../scripts/models/gguf-quant.ts';
import { TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import { readStamp } from '../../scripts/models/write-model.ts';
import { type OnnxInitializer, readOnnxInitializers } from './onnx-initializers.ts';

const DIR = join(DEFAULT_MODELS_DIR, SPEC.name);
const ONNX_TYPE = { FLOAT: 1, UINT8: 2, INT8: 3, FLOAT16: 10 } as const;

let q4: GgufFile;
let q8: GgufFile;
let f32: GgufFile;
let onnxQ4: Map<string, OnnxInitializer>;
let onnxQ8: Map<string, OnnxInitializer>;

beforeAll(async () => {
  await generateModels({ only: SPEC.name });
  q4 = readGguf(join(DIR, GGUF_Q4_0_FILE));
  q8 = readGguf(join(DIR, GGUF_Q8_0_FILE));
  f32 = readGguf(join(DIR, GGUF_F32_FILE));
  onnxQ4 = readOnnxInitializers(join(DIR, 'onnx/model_q4.onnx'), (n) => n.endsWith('.q4') || n.endsWith('.scales'));
  onnxQ8 = readOnnxInitializers(join(DIR, 'onnx/model_quantized.onnx'), (n) => n.includes('_proj.weight.T_'));
}, 120_000);
afterAll(() => {
  q4?.close();
  q8?.close();
  f32?.close();
});

const f16 = (h: number) => {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  return e === 0 ? s * 2 ** -14 * (m / 1024) : s * 2 ** (e - 15) * (1 + m / 1024);
};
const le = (raw: Uint8Array) => new DataView(raw.buffer, raw.byteOffset, raw.byteLength);

/** MatMulNBits B [N, K/32, 16] + scales [N·K/32] → W' [N, K] (row n = output n), as onnxruntime reads it. */
function fromMatMulNBits(b: OnnxInitializer, s: OnnxInitializer): { w: Float32Array; n: number; k: number } {
  const [n, blocks] = b.dims as [number, number, number];
  const k = blocks * 32;
  const scales = s.dataType === ONNX_TYPE.FLOAT ? Array.from({ length: n * blocks }, (_, i) => le(s.raw).getFloat32(i * 4, true)) : Array.from({ length: n * blocks }, (_, i) => f16(le(s.raw).getUint16(i * 2, true)));
  const w = new Float32Array(n * k);
  for (let col = 0; col < n; col++) {
    for (let blk = 0; blk < blocks; blk++) {
      for (let r = 0; r < 32; r++) {
        const byte = b.raw[(col * blocks + blk) * 16 + (r >> 1)]!;
        const q = r & 1 ? byte >> 4 : byte & 15;
        w[col * k + blk * 32 + r] = (q - 8) * scales[col * blocks + blk]!;
      }
    }
  }
  return { w, n, k };
}

/** quantize_dynamic's int8 W [K, N] + scale [N] (zero point 0) → W' [N, K]. */
function fromMatMulInteger(q: OnnxInitializer, s: OnnxInitializer, zp: OnnxInitializer): { w: Float32Array; n: number; k: number } {
  const [k, n] = q.dims as [number, number];
  expect(zp.raw.every((z) => z === 0)).toBe(true);
  const w = new Float32Array(n * k);
  for (let i = 0; i < k; i++) for (let j = 0; j < n; j++) w[j * k + i] = ((q.raw[i * n + j]! << 24) >> 24) * le(s.raw).getFloat32(j * 4, true);
  return { w, n, k };
}

/** GGUF name → ONNX Hugging Face name, and the RoPE heads whose rows llama.cpp permutes. */
function projections(): { gguf: string; hf: string; heads: number }[] {
  const out: { gguf: string; hf: string; heads: number }[] = [];
  for (let i = 0; i < SPEC.numHiddenLayers; i++) {
    const a = `model.layers.${i}.self_attn`;
    const m = `model.layers.${i}.mlp`;
    out.push(
      { gguf: `blk.${i}.attn_q.weight`, hf: `${a}.q_proj.weight`, heads: SPEC.numAttentionHeads },
      { gguf: `blk.${i}.attn_k.weight`, hf: `${a}.k_proj.weight`, heads: SPEC.numKeyValueHeads },
      { gguf: `blk.${i}.attn_v.weight`, hf: `${a}.v_proj.weight`, heads: 0 },
      { gguf: `blk.${i}.attn_output.weight`, hf: `${a}.o_proj.weight`, heads: 0 },
      { gguf: `blk.${i}.ffn_gate.weight`, hf: `${m}.gate_proj.weight`, heads: 0 },
      { gguf: `blk.${i}.ffn_up.weight`, hf: `${m}.up_proj.weight`, heads: 0 },
      { gguf: `blk.${i}.ffn_down.weight`, hf: `${m}.down_proj.weight`, heads: 0 },
    );
  }
  return out;
}

function expectSameRows(file: GgufFile, type: GgmlType, name: string, ref: { w: Float32Array; n: number; k: number }, heads: number): void {
  const info = file.tensors.find((t) => t.name === name)!;
  expect(info, name).toBeDefined();
  expect(info.type, `${name} type`).toBe(type);
  expect(info.ne, `${name} ne`).toEqual([ref.k, ref.n]);
  const got = dequantizeGgufBlocks(type, file.readTensorBytes(name), ref.k, ref.n);
  const order = heads ? ropeRowOrder(heads, SPEC.headDim) : Int32Array.from({ length: ref.n }, (_, i) => i);
  let mismatches = 0;
  for (let row = 0; row < ref.n; row++) {
    const src = order[row]! * ref.k;
    for (let c = 0; c < ref.k; c++) if (!Object.is(got[row * ref.k + c], ref.w[src + c])) mismatches++;
  }
  expect(mismatches, `${name}: elements differing from the ONNX weights`).toBe(0);
}

describe('gguf/model-q4_0.gguf', () => {
  it('is a LLAMA_FTYPE_MOSTLY_Q4_0 file listed in the stamp', () => {
    expect(q4.metadata.get('general.file_type')?.value).toBe(2);
    expect(readStamp(DIR)!.files[GGUF_Q4_0_FILE]?.bytes).toBeGreaterThan(0);
  });

  it('holds exactly the nibbles and scales of onnx/model_q4.onnx, as Q4_0 blocks', () => {
    const list = projections();
    expect(list.length).toBe(7 * SPEC.numHiddenLayers);
    for (const p of list) {
      const b = onnxQ4.get(`${p.hf}.q4`);
      const s = onnxQ4.get(`${p.hf}.scales`);
      expect(b && s, `${p.hf} in model_q4.onnx`).toBeTruthy();
      expect(b!.dataType).toBe(ONNX_TYPE.UINT8);
      expectSameRows(q4, GgmlType.Q4_0, p.gguf, fromMatMulNBits(b!, s!), p.heads);
    }
  });

  it('keeps norms and the tied embedding F32, equal to the f32 GGUF (no output.weight)', () => {
    const quantized = new Set(projections().map((p) => p.gguf));
    expect(q4.tensors.map((t) => t.name)).toEqual(f32.tensors.map((t) => t.name));
    expect(q4.tensors.some((t) => t.name === 'output.weight')).toBe(false);
    for (const t of q4.tensors) {
      if (quantized.has(t.name)) continue;
      expect(t.type, t.name).toBe(GgmlType.F32);
      expect(q4.readTensor(t.name)).toEqual(f32.readTensor(t.name));
    }
  });

  it('differs from the f32 weights by at most half a quantization step per block', () => {
    const name = 'blk.0.ffn_down.weight';
    const ref = f32.readTensor(name);
    const info = q4.tensors.find((t) => t.name === name)!;
    const got = dequantizeGgufBlocks(GgmlType.Q4_0, q4.readTensorBytes(name), info.ne[0]!, info.ne[1]!);
    for (let blk = 0; blk < ref.length / 32; blk++) {
      const slice = ref.subarray(blk * 32, blk * 32 + 32);
      const amax = Math.max(...slice.map(Math.abs));
      const step = amax / 7;
      for (let j = 0; j < 32; j++) expect(Math.abs(got[blk * 32 + j]! - slice[j]!)).toBeLessThanOrEqual(0.5 * step * 1.002 + 1e-12);
    }
  });
});

describe('gguf/model-q8_0.gguf', () => {
  it('is a LLAMA_FTYPE_MOSTLY_Q8_0 file listed in the stamp', () => {
    expect(q8.metadata.get('general.file_type')?.value).toBe(7);
    expect(readStamp(DIR)!.files[GGUF_Q8_0_FILE]?.bytes).toBeGreaterThan(0);
  });

  it('holds exactly the int8 weights and scales of onnx/model_quantized.onnx, as Q8_0 blocks', () => {
    for (const p of projections()) {
      const q = onnxQ8.get(`${p.hf}.T_quantized`);
      const s = onnxQ8.get(`${p.hf}.T_scale`);
      const zp = onnxQ8.get(`${p.hf}.T_zero_point`);
      expect(q && s && zp, `${p.hf} in model_quantized.onnx`).toBeTruthy();
      expect(q!.dataType).toBe(ONNX_TYPE.INT8);
      expectSameRows(q8, GgmlType.Q8_0, p.gguf, fromMatMulInteger(q!, s!, zp!), p.heads);
    }
  });

  it('keeps norms and the tied embedding F32', () => {
    const quantized = new Set(projections().map((p) => p.gguf));
    for (const t of q8.tensors) if (!quantized.has(t.name)) expect(t.type, t.name).toBe(GgmlType.F32);
  });
});
