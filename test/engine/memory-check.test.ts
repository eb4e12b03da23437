import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import { deviceCapacity, WASM32_HEAP_BYTES, type DeviceCapacity } from '../../src/engine/load/memory/device-capacity.ts';
import { httpSource } from '../../src/engine/load/http-source.ts';
import { classifyLoadError, loadFailureReason } from '../../src/engine/load/load-failure.ts';
import { DTYPE_FILES } from '../../src/engine/load/load-model.ts';
import { checkMemory, withSmallerDtype, type SizedModelSource } from '../../src/engine/load/memory/memory-check.ts';
import { estimateLoad, INT8_HEAD_SAVING_PER_ELEMENT, MEASURED_LOADS, RENDERER_BASE_BYTES, wasmHeapFactor } from '../../src/engine/load/memory/memory-estimate.ts';
import { shortfall } from '../../src/engine/load/memory/memory-fit.ts';
import type { Dtype } from '../../src/engine/model/language-model.ts';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** docs/memory.md's table "The file handed to onnxruntime": dtype → [model MiB, loading peak after]. */
function documentedLoads(): Map<string, { file: number; peak: number }> {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/memory.md'), 'utf8');
  const table = doc.slice(doc.indexOf('**The file handed to onnxruntime, not copied for it**'));
  const rows = new Map<string, { file: number; peak: number }>();
  for (const m of table.matchAll(/^\| (fp32|fp16|q4|q4f16|q8) \| (\d+) \| \d+ → (\d+) \|/gm)) {
    if (!rows.has(m[1]!)) rows.set(m[1]!, { file: Number(m[2]), peak: Number(m[3]) });
  }
  return rows;
}

const wasm = (deviceMemoryGiB: number | null = 8): DeviceCapacity => ({
  device: 'wasm',
  deviceMemoryBytes: deviceMemoryGiB === null ? null : deviceMemoryGiB * GiB,
  wasmHeapBytes: WASM32_HEAP_BYTES,
  maxBufferBytes: null,
  maxBufferSize: null,
  maxStorageBufferBindingSize: null,
  shaderF16: false,
});

describe('the estimate rests on docs/memory.md', () => {
  it("reproduces each documented format's loading peak from its file size", () => {
    const rows = documentedLoads();
    expect([...rows.keys()].sort()).toEqual(Object.keys(MEASURED_LOADS).sort());
    for (const [dtype, { file, peak }] of rows) {
      expect(MEASURED_LOADS[dtype as Dtype]).toEqual({ fileMiB: file, loadingPeakMiB: peak });
      const estimate = estimateLoad('wasm', dtype as Dtype, file * MiB);
      expect(Math.abs(estimate.peakBytes - peak * MiB)).toBeLessThanOrEqual(1);
      // The peak is the renderer, one copy of the file and the wasm heap.
      expect(estimate.peakBytes).toBe(RENDERER_BASE_BYTES + file * MiB + estimate.wasmHeapBytes!);
    }
  });

  it('holds what the doc says of the formats on wasm: fp16 as fp32 (at least twice its file), fp32 at least once', () => {
    expect(wasmHeapFactor('fp16')).toBeGreaterThanOrEqual(2);
    expect(wasmHeapFactor('fp32')).toBeGreaterThanOrEqual(1);
    expect(wasmHeapFactor('fp16')).toBeGreaterThan(wasmHeapFactor('fp32'));
  });

  it('scales with the file: twice the file, twice the heap', () => {
    const one = estimateLoad('wasm', 'q8', 300 * MiB);
    const two = estimateLoad('wasm', 'q8', 600 * MiB);
    expect(Math.abs(two.wasmHeapBytes! - 2 * one.wasmHeapBytes!)).toBeLessThanOrEqual(1);
  });

  it("with the 8-bit embedding and lm_head on wasm, lower by the documented load peaks' saving per embedding element", () => {
    // docs/memory.md: load peak q4 864 → 716 MiB, q8 794 → 699 MiB on the 49,152 × 576 matrix.
    const smol = { vocab_size: 49152, hidden_size: 576 };
    for (const [dtype, saved] of [['q4', 148], ['q8', 95]] as const) {
      const plain = estimateLoad('wasm', dtype, MEASURED_LOADS[dtype].fileMiB * MiB, smol);
      const head = estimateLoad('wasm', dtype, MEASURED_LOADS[dtype].fileMiB * MiB, smol, { int8Head: true });
      expect((plain.peakBytes - head.peakBytes) / MiB).toBeCloseTo(saved, 3);
      expect(plain.wasmHeapBytes! - head.wasmHeapBytes!).toBe(plain.peakBytes - head.peakBytes);
      expect(INT8_HEAD_SAVING_PER_ELEMENT[dtype] * 49152 * 576).toBeCloseTo(saved * MiB, 0);
    }
    // Formats not measured take the smaller saving; without config.json's shape, no saving.
    expect(INT8_HEAD_SAVING_PER_ELEMENT.q4f16).toBe(Math.min(INT8_HEAD_SAVING_PER_ELEMENT.q4, INT8_HEAD_SAVING_PER_ELEMENT.q8));
    expect(estimateLoad('wasm', 'q4', 176 * MiB, null, { int8Head: true })).toEqual(estimateLoad('wasm', 'q4', 176 * MiB));
    // Not below the file itself, however large the vocabulary against the file.
    expect(estimateLoad('wasm', 'q4', 10 * MiB, { vocab_size: 256000, hidden_size: 4096 }, { int8Head: true }).wasmHeapBytes).toBe(10 * MiB);
    // WebGPU has no such rewrite.
    expect(estimateLoad('webgpu', 'q4', 176 * MiB, smol, { int8Head: true })).toEqual(estimateLoad('webgpu', 'q4', 176 * MiB, smol));
  });

  it("on WebGPU: the file's bytes in GPU memory, and the embedding matrix as the largest buffer, by config.json", () => {
    const config = { vocab_size: 128256, hidden_size: 2048 };
    expect(estimateLoad('webgpu', 'fp32', 5e9, config)).toMatchObject({ gpuBytes: 5e9, wasmHeapBytes: null, largestBufferBytes: 128256 * 2048 * 4 });
    expect(estimateLoad('webgpu', 'q4f16', 1e9, config).largestBufferBytes).toBe(128256 * 2048 * 2);
    expect(estimateLoad('webgpu', 'q4', 1e9, { text_config: config }).largestBufferBytes).toBe(128256 * 2048 * 4);
    expect(estimateLoad('webgpu', 'q4', 1e9, {}).largestBufferBytes).toBeNull();
  });
});

describe('the comparison with the device', () => {
  it("passes the wasm heap's 4 GiB before the device's memory", () => {
    const short = shortfall(estimateLoad('wasm', 'fp32', 3 * GiB), wasm(64));
    expect(short).toMatchObject({ limit: 'wasm_heap', available: WASM32_HEAP_BYTES });
    expect(short!.needed).toBeGreaterThan(WASM32_HEAP_BYTES);
  });

  it("passes the device's memory where the heap would fit", () => {
    const estimate = estimateLoad('wasm', 'q8', 1 * GiB);
    expect(estimate.wasmHeapBytes!).toBeLessThan(WASM32_HEAP_BYTES);
    expect(shortfall(estimate, wasm(2))).toEqual({ limit: 'device_memory', needed: estimate.peakBytes, available: 2 * GiB });
    expect(shortfall(estimate, wasm(8))).toBeNull();
    // A browser that does not say its memory: not checked.
    expect(shortfall(estimate, wasm(null))).toBeNull();
  });

  it("passes a WebGPU buffer limit with a large embedding, and counts GPU memory in the device's", () => {
    const gpu: DeviceCapacity = { ...wasm(8), device: 'webgpu', wasmHeapBytes: null, maxBufferBytes: 256 * MiB, maxBufferSize: GiB, maxStorageBufferBindingSize: 256 * MiB };
    const config = { vocab_size: 128256, hidden_size: 2048 };
    expect(shortfall(estimateLoad('webgpu', 'fp32', 1e9, config), gpu)).toMatchObject({ limit: 'gpu_buffer', needed: 128256 * 2048 * 4, available: 256 * MiB });
    expect(shortfall(estimateLoad('webgpu', 'q4', 1e8, { vocab_size: 1000, hidden_size: 64 }), gpu)).toBeNull();
    const big = estimateLoad('webgpu', 'q4', 4 * GiB, {});
    expect(shortfall(big, gpu)).toEqual({ limit: 'device_memory', needed: big.peakBytes + 4 * GiB, available: 8 * GiB });
  });

  it("reads the device's offer: deviceMemory, the smaller of the two WebGPU limits, shader-f16", async () => {
    const adapter = { limits: { maxBufferSize: 2 * GiB, maxStorageBufferBindingSize: GiB }, features: new Set(['shader-f16']) };
    const nav = { deviceMemory: 4, gpu: { requestAdapter: async () => adapter } };
    expect(await deviceCapacity('webgpu', nav)).toMatchObject({ deviceMemoryBytes: 4 * GiB, maxBufferBytes: GiB, maxBufferSize: 2 * GiB, shaderF16: true, wasmHeapBytes: null });
    expect(await deviceCapacity('wasm', { deviceMemory: 0.5 })).toMatchObject({ deviceMemoryBytes: GiB / 2, wasmHeapBytes: WASM32_HEAP_BYTES, maxBufferBytes: null });
    expect(await deviceCapacity('wasm', {})).toMatchObject({ deviceMemoryBytes: null });
  });
});

/** A model whose files have the given sizes (null: offered, size unstated). */
function sized(files: Partial<Record<Dtype, number | null>>): SizedModelSource {
  const byFile = new Map(Object.entries(files).map(([d, n]) => [DTYPE_FILES[d as Dtype], n]));
  return {
    has: async (file) => byFile.has(file),
    bytes: async (file) => (byFile.has(file) ? byFile.get(file)! : null),
  };
}

describe('the check before the download', () => {
  const base = { model: 'org/m', device: 'wasm' as const, shaderF16: false, config: null, capacity: wasm(8) };

  it('refuses a named dtype that will not fit, naming the bytes and a dtype of the model that fits', async () => {
    const source = sized({ fp32: 5 * GiB, fp16: 2.5 * GiB, q8: 1.3 * GiB, q4: 1 * GiB });
    const e = (await checkMemory({ ...base, dtype: 'fp32', auto: false, source }).catch((x: unknown) => x)) as JevError;
    expect(JevError.is(e)).toBe(true);
    expect(loadFailureReason(e)).toBe('insufficient_memory');
    expect(e.param).toBe('dtype');
    expect(e.details).toMatchObject({ limit: 'wasm_heap', available: WASM32_HEAP_BYTES, dtype: 'fp32', device: 'wasm' });
    expect(e.details!['needed']).toBe(estimateLoad('wasm', 'fp32', 5 * GiB).wasmHeapBytes);
    // fp16 is held as fp32 on wasm: too big as well; q8 is the device's first format that fits.
    expect(e.details!['alternative']).toEqual({ model: 'org/m', dtype: 'q8', bytes: 1.3 * GiB });
    expect(e.message).toContain('?dtype=q8');
    expect(e.message).toContain('Nothing was downloaded');
  });

  it('under auto, takes the next format that fits instead of refusing', async () => {
    const source = sized({ fp32: 5 * GiB, q4: 1 * GiB });
    expect(await checkMemory({ ...base, dtype: 'fp32', auto: true, source })).toBe('q4');
  });

  it('lets through what fits, and what it cannot size', async () => {
    expect(await checkMemory({ ...base, dtype: 'q8', auto: false, source: sized({ q8: 200 * MiB }) })).toBe('q8');
    expect(await checkMemory({ ...base, dtype: 'fp32', auto: false, source: sized({ fp32: null }) })).toBe('fp32');
    expect(await checkMemory({ ...base, dtype: 'fp32', auto: false, source: { has: async () => true } })).toBe('fp32');
  });

  it('counts the 8-bit head a wasm load makes: fp32 without it, q4 with it, fp32 with it under quantizeHead', async () => {
    // A model whose q4 fits only once its head is 8-bit: the estimate of a plain q4 load is just past the device.
    const config = { vocab_size: 262144, hidden_size: 1152 };
    const q4 = 700 * MiB;
    const plain = estimateLoad('wasm', 'q4', q4, config).peakBytes;
    const head = estimateLoad('wasm', 'q4', q4, config, { int8Head: true }).peakBytes;
    expect(head).toBeLessThan(plain);
    const capacity = { ...wasm(8), deviceMemoryBytes: Math.floor((plain + head) / 2) };
    expect(await checkMemory({ ...base, config, capacity, dtype: 'q4', auto: false, source: sized({ q4 }) })).toBe('q4');
    const fp32 = ((plain + head) / 2 + MiB - RENDERER_BASE_BYTES) / (1 + wasmHeapFactor('fp32'));
    const asked = { ...base, config, capacity, dtype: 'fp32' as const, auto: false, source: sized({ fp32 }) };
    expect(await checkMemory(asked).catch((e: JevError) => e.details?.['limit'])).toBe('device_memory');
    expect(await checkMemory({ ...asked, quantizeHead: true })).toBe('fp32');
  });

  it('where no format of the model fits: refused with no alternative', async () => {
    const e = (await checkMemory({ ...base, capacity: wasm(1), dtype: 'q8', auto: true, source: sized({ q8: 900 * MiB, q4: 800 * MiB }) }).catch((x: unknown) => x)) as JevError;
    expect(e.details).toMatchObject({ reason: 'insufficient_memory', limit: 'device_memory', available: GiB, alternative: null });
  });
});

describe('running out of memory anyway', () => {
  const ctx = { model: 'org/m', base: 'http://models.test/org/m/resolve/main/', dtype: 'fp32', device: 'wasm' };

  it('an allocation failure during the load is reported as insufficient_memory, then names a smaller dtype', async () => {
    for (const error of [new RangeError('Array buffer allocation failed'), new Error('Aborted(OOM)'), new Error("failed to allocate a buffer of size 1073741824: out of memory")]) {
      const e = await classifyLoadError(error, ctx);
      expect(e.details).toMatchObject({ reason: 'insufficient_memory', dtype: 'fp32', device: 'wasm', alternative: null });
    }
    const failure = await classifyLoadError(new RangeError('Array buffer allocation failed'), ctx);
    const named = await withSmallerDtype(failure, { model: 'org/m', device: 'wasm', shaderF16: false, dtype: 'fp32', auto: false, config: null, source: sized({ fp32: 500 * MiB, fp16: 250 * MiB, q8: 130 * MiB }) });
    // The device's first format with smaller files (wasm: q8 before fp16).
    expect(named.details!['alternative']).toEqual({ model: 'org/m', dtype: 'q8', bytes: 130 * MiB });
    expect(named.message).toContain('?dtype=q8');
  });

  it('another failure keeps its own reason', async () => {
    const e = await classifyLoadError(new Error('something else broke'), ctx);
    expect(loadFailureReason(e)).toBe('load_error');
  });
});

describe("httpSource states the files' sizes from the answers it already has", () => {
  it('sums the graph and its external data, from Content-Length or the hub\'s X-Linked-Size', async () => {
    const config = { 'transformers.js_config': { use_external_data_format: { 'model_fp16.onnx': 1 } } };
    const heads: string[] = [];
    const fetchFn = (async (url: string, init?: RequestInit) => {
      const file = url.slice(url.indexOf('/resolve/main/') + '/resolve/main/'.length);
      if (init?.method === 'HEAD') heads.push(file);
      if (file === 'config.json') return new Response(JSON.stringify(config));
      const sizes: Record<string, Record<string, string>> = {
        'onnx/model_fp16.onnx': { 'content-length': '1000' },
        'onnx/model_fp16.onnx_data': { 'x-linked-size': '5000000000', 'content-length': '12' },
        'onnx/model.onnx': {},
      };
      const headers = sizes[file];
      return headers ? new Response(null, { status: 200, headers }) : new Response(null, { status: 404 });
    }) as typeof fetch;
    const source = httpSource({ model: 'org/m', host: 'http://models.test', device: 'wasm', dtype: 'auto' }, { cacheName: null, fetch: fetchFn });
    expect(await source.bytes('model_fp16.onnx')).toBe(5_000_001_000);
    expect(heads).toContain('onnx/model_fp16.onnx_data');
    // Offered, but no size stated; and not offered at all.
    expect(await source.bytes('model.onnx')).toBeNull();
    expect(await source.bytes('model_q4.onnx')).toBeNull();
  });
});
