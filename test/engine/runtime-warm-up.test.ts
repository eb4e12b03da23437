/**
 * The load's warm-up of onnxruntime (src/engine/load/runtime-warm-up.ts): its one-node graph is a
 * model onnxruntime-web creates and runs (the app's bundle, wasm, in Node; decoded by an
 * independent ONNX decoder too), and a warm-up that fails leaves the load as it was: it never rejects.
 */
import onnxProto from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { identityModel, warmUpRuntime } from '../../src/engine/load/runtime-warm-up.ts';
import { loadOrtWeb } from '../support/ort-web.ts';

describe('warmUpRuntime', () => {
  it('its graph is one Identity node from a float scalar x to y, IR 7, opset 13', () => {
    const m = onnxProto.onnx.ModelProto.decode(identityModel());
    expect(Number(m.irVersion)).toBe(7);
    expect(m.opsetImport!.map((o) => [o.domain ?? '', Number(o.version)])).toEqual([['', 13]]);
    expect(m.graph!.node!.map((n) => [n.opType, n.input, n.output])).toEqual([['Identity', ['x'], ['y']]]);
    expect(m.graph!.input!.map((v) => [v.name, v.type!.tensorType!.elemType])).toEqual([['x', 1]]);
    expect(m.graph!.output!.map((v) => v.name)).toEqual(['y']);
  });

  it('onnxruntime-web creates and runs it; the warm-up releases its session', async () => {
    const ort = await loadOrtWeb();
    const session = await ort.InferenceSession.create(identityModel(), { executionProviders: ['wasm'] });
    const out = await session.run({ x: new ort.Tensor('float32', Float32Array.of(2.5), []) });
    expect(Array.from(out['y']!.data)).toEqual([2.5]);
    await session.release();
    let released = 0;
    const factory = {
      create: async (model: Uint8Array, options: { executionProviders: string[] }) => {
        const s = await ort.InferenceSession.create(model, options);
        return { release: async () => (released++, s.release()) };
      },
    };
    await warmUpRuntime(factory);
    expect(released).toBe(1);
  });

  it('a factory that throws or rejects: the warm-up settles all the same', async () => {
    await expect(warmUpRuntime({ create: async () => Promise.reject(new Error('no backend')) })).resolves.toBeUndefined();
    await expect(warmUpRuntime({ create: () => { throw new Error('sync'); } })).resolves.toBeUndefined();
  });
});
