/**
 * Which fused attention operators a graph uses, read at load (graph/fused-attention.ts): what
 * decides whether a WebGPU load runs the long-pass check (load-model.ts `passLimit`). Compared,
 * file by file, with the node op types onnx-proto decodes from the same bytes; and reported by
 * `withSessionRewrites` for the graphs it reads, null for one it does not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { fusedAttentionOps } from '../../src/engine/graph/fused-attention.ts';
import { withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { GENERATED, TINY } from '../support/models.ts';

const GQA = `${TINY}-gqa`;
const onnxFiles = (model: string) => readdirSync(join(GENERATED, model, 'onnx')).filter((f) => f.endsWith('.onnx'));
const bytesOf = (model: string, file: string) => new Uint8Array(readFileSync(join(GENERATED, model, 'onnx', file)));

/** The op types of the main graph's nodes, decoded by onnx-proto (an independent reader). */
function opTypes(bytes: Uint8Array): Set<string> {
  const model = onnxProto.onnx.ModelProto.decode(bytes);
  return new Set((model.graph?.node ?? []).map((n) => n.opType ?? ''));
}

describe('fusedAttentionOps', () => {
  for (const [model, expected] of [
    [TINY, []],
    [GQA, ['GroupQueryAttention']],
  ] as const) {
    for (const file of onnxFiles(model)) {
      it(`${model} ${file}: ${expected.length ? expected.join(', ') : 'none'}, as onnx-proto reads its nodes`, () => {
        const bytes = bytesOf(model, file);
        const found = fusedAttentionOps(bytes);
        expect(found).toEqual(expected);
        const ops = opTypes(bytes);
        for (const op of found!) expect(ops.has(op), op).toBe(true);
        // The standard-op export computes attention from MatMul and Softmax; the GQA export does not.
        expect(ops.has('Softmax')).toBe(expected.length === 0);
      });
    }
  }

  it('bytes that are not a model: null', () => {
    expect(fusedAttentionOps(new Uint8Array([1, 2, 3]))).toBeNull();
  });
});

describe('withSessionRewrites reports the fused attention of what it read', () => {
  const factory = { create: async (..._args: unknown[]) => ({}) };

  it('the standard-op and the GQA export, loaded one after the other: the union', async () => {
    const { report } = await withSessionRewrites(factory, async () => {
      await factory.create(bytesOf(TINY, 'model.onnx'), {});
      return factory.create(bytesOf(GQA, 'model.onnx'), {});
    });
    expect(report.sessions).toBe(2);
    expect(report.fusedAttention).toEqual(['GroupQueryAttention']);
  });

  it('a standard-op export alone: none', async () => {
    const { report } = await withSessionRewrites(factory, () => factory.create(bytesOf(TINY, 'model_q4.onnx'), {}));
    expect(report.fusedAttention).toEqual([]);
  });

  it('a model given as a URL, which the load does not read: null, so the check runs', async () => {
    const { report } = await withSessionRewrites(factory, () => factory.create('https://example.invalid/model.onnx', {}));
    expect(report.fusedAttention).toBeNull();
  });
});
