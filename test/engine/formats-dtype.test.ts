import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import { DTYPE_PREFERENCE, dtypePreference } from '../../src/engine/load/dtype-preference.ts';
import { kvCacheType, type Dtype } from '../../src/engine/model/language-model.ts';
import { chooseDtype, DTYPE_FILES, exporterDtype, missingOperator, offeredDtypes, workingDtypes, type ModelSource } from '../../src/engine/load/load-model.ts';

const ALL: Dtype[] = ['fp32', 'fp16', 'q8', 'q4', 'q4f16'];

/** A model offering exactly these formats; counts what was asked. */
function offering(dtypes: readonly Dtype[]): ModelSource & { asked: string[] } {
  const files = new Set(dtypes.map((d) => DTYPE_FILES[d]));
  const asked: string[] = [];
  return {
    asked,
    async has(file) {
      asked.push(file);
      return files.has(file);
    },
  };
}

async function refusal(p: Promise<unknown>): Promise<JevError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(JevError.is(e)).toBe(true);
  return e as JevError;
}

describe('the preference table', () => {
  it('lists every format at most once per device, and no float16 format on WebGPU without shader-f16', () => {
    for (const [cls, tiers] of Object.entries(DTYPE_PREFERENCE)) {
      const flat = tiers.flat();
      expect(new Set(flat).size, cls).toBe(flat.length);
      for (const d of flat) expect(ALL).toContain(d);
    }
    expect(dtypePreference('webgpu', false)).not.toContain('fp16');
    expect(dtypePreference('webgpu', false)).not.toContain('q4f16');
  });
});

describe('chooseDtype auto', () => {
  it('takes the first format of the device row that the model offers', async () => {
    for (const [device, f16] of [['webgpu', true], ['webgpu', false], ['wasm', false], ['cpu', false]] as const) {
      const row = dtypePreference(device, f16);
      // Offer everything but the best: the second one is chosen.
      expect(await chooseDtype('auto', device, f16, offering(row.slice(1)))).toBe(row[1]);
      expect(await chooseDtype('auto', device, f16, offering(ALL))).toBe(row[0]);
    }
  });

  it('never takes a float16 format on WebGPU without shader-f16, even when it is all the model offers but fp32', async () => {
    expect(await chooseDtype('auto', 'webgpu', false, offering(['q4f16', 'fp16', 'fp32']))).toBe('fp32');
  });

  it('says the model offers none of the files when it offers none', async () => {
    const e = await refusal(chooseDtype('auto', 'wasm', false, offering([])));
    expect(e.code).toBe('model_load_failed');
    expect(e.message).toMatch(/offers none of the ONNX files/);
  });

  it("within a tier of formats measured alike, the model's recommendation decides", async () => {
    // The table ships without ties (it is the lead's measured order); check the rule on a tie made here.
    const saved = DTYPE_PREFERENCE.wasm;
    (DTYPE_PREFERENCE as Record<string, readonly (readonly Dtype[])[]>).wasm = [['q8', 'q4'], ['fp32']];
    try {
      expect(await chooseDtype('auto', 'wasm', false, offering(ALL), 'q4')).toBe('q4');
      expect(await chooseDtype('auto', 'wasm', false, offering(ALL), null)).toBe('q8');
      // A recommendation outside the best offered tier does not override the measurement.
      expect(await chooseDtype('auto', 'wasm', false, offering(ALL), 'fp32')).toBe('q8');
    } finally {
      (DTYPE_PREFERENCE as Record<string, readonly (readonly Dtype[])[]>).wasm = saved;
    }
  });
});

describe('chooseDtype by name', () => {
  it('refuses q4f16 and fp16 on WebGPU without shader-f16, naming the reason and a format that works', async () => {
    for (const dtype of ['q4f16', 'fp16'] as const) {
      const e = await refusal(chooseDtype(dtype, 'webgpu', false, offering(['q4f16', 'fp16', 'q4', 'fp32'])));
      expect(e.code).toBe('model_load_failed');
      expect(e.param).toBe('dtype');
      expect(e.message).toContain('shader-f16');
      expect(e.message).toContain('use dtype q4 instead');
      expect(e.details).toMatchObject({ reason: 'unsupported_format', dtype, device: 'webgpu', instead: 'q4' });
    }
  });

  it('names what the model offers, not what the table prefers', async () => {
    const e = await refusal(chooseDtype('q4f16', 'webgpu', false, offering(['q4f16', 'fp32'])));
    expect(e.details?.['instead']).toBe('fp32');
    const none = await refusal(chooseDtype('q4f16', 'webgpu', false, offering(['q4f16'])));
    expect(none.details?.['instead']).toBeNull();
    expect(none.message).toMatch(/offers no other format/);
  });

  it('lets a device with shader-f16, wasm and Node have what they ask for', async () => {
    expect(await chooseDtype('q4f16', 'webgpu', true, offering([]))).toBe('q4f16');
    expect(await chooseDtype('fp16', 'wasm', false, offering([]))).toBe('fp16');
    expect(await chooseDtype('q4', 'cpu', false, offering([]))).toBe('q4');
  });
});

describe('workingDtypes and offeredDtypes', () => {
  it('orders what the model offers by the device row, less what cannot run and what is excluded', async () => {
    const offered = await offeredDtypes(offering(['fp32', 'q4f16', 'q4']));
    expect(offered).toEqual(['fp32', 'q4', 'q4f16']);
    expect(workingDtypes('webgpu', false, offered)).toEqual(['q4', 'fp32']);
    expect(workingDtypes('webgpu', true, offered)).toEqual(dtypePreference('webgpu', true).filter((d) => offered.includes(d)));
    expect(workingDtypes('webgpu', false, offered, ['q4'])).toEqual(['fp32']);
    expect(workingDtypes('wasm', false, [])).toEqual([]);
  });
});

describe('exporterDtype', () => {
  it("reads transformers.js_config.dtype of a real hub export's config.json", () => {
    const config = JSON.parse(readFileSync(new URL('../../vendor/metadata/qwen2.5-instruct/onnx-community-config.json', import.meta.url), 'utf8'));
    expect(exporterDtype(config)).toBe('q4f16');
  });

  it('reads a per-session map and ignores what is not a dtype', () => {
    expect(exporterDtype({ 'transformers.js_config': { dtype: { model: 'q4', embed_tokens: 'fp16' } } })).toBe('q4');
    expect(exporterDtype({ 'transformers.js_config': { dtype: 'int3' } })).toBeNull();
    expect(exporterDtype({})).toBeNull();
    expect(exporterDtype(null)).toBeNull();
  });
});

describe('kvCacheType (where a session does not declare its inputs)', () => {
  it("follows the config's kv_cache_dtype, as a real hub export sets it", () => {
    const config = JSON.parse(readFileSync(new URL('../../vendor/metadata/qwen2.5-instruct/onnx-community-config.json', import.meta.url), 'utf8'));
    expect(kvCacheType(config, 'q4f16')).toBe('float16');
    expect(kvCacheType(config, 'fp16')).toBe('float16');
    expect(kvCacheType(config, 'q4')).toBe('float32');
    expect(kvCacheType({ 'transformers.js_config': { kv_cache_dtype: 'float32' } }, 'fp16')).toBe('float32');
  });

  it('defaults to float16 for the float16 formats only', () => {
    for (const d of ALL) expect(kvCacheType({}, d)).toBe(d === 'fp16' || d === 'q4f16' ? 'float16' : 'float32');
  });
});

describe('missingOperator', () => {
  it("finds the operator in onnxruntime's session-creation errors", () => {
    expect(
      missingOperator(new Error("Can't create a session. ERROR_CODE: 9, ERROR_MESSAGE: Could not find an implementation for SimplifiedLayerNormalization(1) node with name '/model/layers.0/input_layernorm/LayerNorm'")),
    ).toEqual({ operator: 'SimplifiedLayerNormalization(1)', node: '/model/layers.0/input_layernorm/LayerNorm' });
    expect(missingOperator(new Error('Could not find an implementation for MatMulNBits(1) node with name \'m\''))?.operator).toBe('MatMulNBits(1)');
    expect(missingOperator(new Error('kernel type GroupQueryAttention is not implemented'))?.operator).toBe('GroupQueryAttention');
  });

  it('is null for other failures', () => {
    expect(missingOperator(new Error('Failed to fetch'))).toBeNull();
    expect(missingOperator('protobuf parsing failed')).toBeNull();
  });
});
