/**
 * The in-process server's sessions (src/server/node-session-rewrites.ts, installed in the engine's
 * thread): every model file onnxruntime-node is asked to create is given `num_logits_to_keep`
 * (engine/graph/logits-to-keep.ts) and step outputs (engine/graph/step-outputs.ts), and a q4 one
 * its int8 projections and 8-bit head after that; a file above the bound on inline weights is
 * handed over as its graph alone, its weights read from the file.
 * Checked against independent readings: the factory receives the rewritten graph (the input is
 * declared, the counts say what was done) with the folder its weights are read from, which give in
 * onnxruntime-node the numbers of the file itself (fp32) or of the whole file's rewrite (q4), and in
 * onnxruntime-node the rows kept are the numbers of the graph computing every row
 * (fp32 against the original export; q4 against the q4 rewrite alone, so adding the row slice
 * changed nothing of the int8 arithmetic).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { LOGITS_TO_KEEP } from '../../src/engine/graph/logits-to-keep.ts';
import { float16ToNumber } from '../../src/engine/runtime/float16.ts';
import { readGraph } from '../../src/engine/graph/onnx-graph.ts';
import { installNodeRewrites, nodeQ4Rewrite, nodeRewrite } from '../../src/server/node-session-rewrites.ts';
import { GENERATED, TINY } from '../support/models.ts';

const file = (name: string) => join(GENERATED, TINY, 'onnx', name);
const declares = (model: Uint8Array) => readGraph(model)!.inputs.some((v) => v.name === LOGITS_TO_KEEP);
const IDS = [1, 17, 42, 5, 99, 3, 250, 7];

/** The logits [1, rows, V] of IDS from an empty cache, keeping `keep` rows where the graph takes it. */
async function logits(model: Uint8Array | string, keep: number | null, options: object = {}): Promise<{ data: Float32Array; dims: readonly number[] }> {
  const s = await (typeof model === 'string' ? ort.InferenceSession.create(model, options) : ort.InferenceSession.create(model, options));
  const feeds: Record<string, ort.Tensor> = {};
  for (const name of s.inputNames) {
    if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(IDS.map(BigInt)), [1, IDS.length]);
    else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', new BigInt64Array(IDS.length).fill(1n), [1, IDS.length]);
    else if (name === 'position_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(IDS.map((_, i) => BigInt(i))), [1, IDS.length]);
    else if (name === LOGITS_TO_KEEP) feeds[name] = new ort.Tensor('int64', [BigInt(keep ?? 0)], []);
    else if (name.startsWith('past_key_values')) {
      const meta = s.inputMetadata.find((m) => m.name === name) as { shape?: (number | string)[] } | undefined;
      const dims = (meta?.shape ?? [1, 1, 0, 1]).map((d, k) => (typeof d === 'number' ? d : k === 2 ? 0 : 1));
      const type = (meta as { type?: string } | undefined)?.type === 'float16' ? 'float16' : 'float32';
      feeds[name] = new ort.Tensor(type, type === 'float16' ? new Uint16Array(0) : new Float32Array(0), dims);
    }
  }
  const out = (await s.run(feeds))['logits']!;
  const data = out.type === 'float16' ? Float32Array.from(out.data as Uint16Array, float16ToNumber) : (out.data as Float32Array).slice();
  const result = { data, dims: out.dims };
  await s.release();
  return result;
}

/** The largest difference between the last `rows` rows of two [1, n, V] logits, over the largest magnitude. */
function lastRowsDiff(a: { data: Float32Array; dims: readonly number[] }, b: { data: Float32Array; dims: readonly number[] }, rows: number): number {
  const v = a.dims.at(-1)!;
  expect(b.dims.at(-1)).toBe(v);
  const ta = a.data.subarray(a.data.length - rows * v);
  const tb = b.data.subarray(b.data.length - rows * v);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < ta.length; i++) {
    diff = Math.max(diff, Math.abs(ta[i]! - tb[i]!));
    scale = Math.max(scale, Math.abs(ta[i]!));
  }
  expect(scale).toBeGreaterThan(0);
  return diff / scale;
}

describe('the in-process server\'s session rewrites', () => {
  it('hands onnxruntime-node the rewritten graph alone with its folder, for inline and external weights and a file above the bound', async () => {
    const calls: unknown[][] = [];
    const factory = { create: async (...args: unknown[]) => calls.push(args) };
    const count = installNodeRewrites(factory, 'cpu')!;
    const folder = { extra: { session: { model_external_initializers_file_folder_path: join(GENERATED, TINY, 'onnx') } } };
    await factory.create(file('model.onnx'), { intraOpNumThreads: 1 });
    expect(calls[0]![0]).toBeInstanceOf(Uint8Array);
    // Its weights named in the file itself, which onnxruntime reads from the folder.
    expect((calls[0]![0] as Uint8Array).byteLength).toBeLessThan(readFileSync(file('model.onnx')).byteLength / 4);
    expect(calls[0]![1]).toEqual({ intraOpNumThreads: 1, ...folder });
    expect(declares(readFileSync(file('model.onnx')))).toBe(false);
    expect(declares(calls[0]![0] as Uint8Array)).toBe(true);
    expect(lastRowsDiff(await logits(file('model.onnx'), null), await logits(calls[0]![0] as Uint8Array, 0, calls[0]![1] as object), IDS.length)).toBe(0);
    expect(count).toEqual({ models: 1, logitsToKeep: 1, stepOutputs: 1, nodes: 0, heads: 0 });

    const q4 = new Uint8Array(readFileSync(file('model_q4.onnx')));
    const projections = [...readGraph(q4)!.nodes.values()].filter((n) => n.op === 'MatMulNBits').length;
    expect(projections).toBeGreaterThan(0);
    await factory.create(file('model_q4.onnx'));
    expect(declares(calls[1]![0] as Uint8Array)).toBe(true);
    // The 8-bit head made from the weights read, the other weights read by onnxruntime from the file: the numbers of the whole file's rewrite.
    expect(count).toEqual({ models: 2, logitsToKeep: 2, stepOutputs: 2, nodes: projections, heads: 1 });
    expect(calls[1]![1]).toEqual(folder);
    expect(lastRowsDiff(await logits(nodeRewrite(q4)!.graph, 0), await logits(calls[1]![0] as Uint8Array, 0, calls[1]![1] as object), IDS.length)).toBe(0);

    // model_fp16.onnx has model_fp16.onnx_data beside it: the graph is rewritten, the weights read from the folder.
    await factory.create(file('model_fp16.onnx'), { intraOpNumThreads: 1, extra: { session: { use_env_allocators: '0' } } });
    expect(declares(calls[2]![0] as Uint8Array)).toBe(true);
    expect(calls[2]![1]).toEqual({ intraOpNumThreads: 1, extra: { session: { use_env_allocators: '0', model_external_initializers_file_folder_path: join(GENERATED, TINY, 'onnx') } } });
    expect(count.logitsToKeep).toBe(3);

    // Above the bound on inline weights: the graph alone, rewritten, its weights read from the file in its folder (externalize-file.ts).
    const bounded = { create: async (...args: unknown[]) => calls.push(args) };
    const big = installNodeRewrites(bounded, 'cpu', 1024)!;
    await bounded.create(file('model.onnx'), { intraOpNumThreads: 1 });
    const [graph, options] = calls[3] as [Uint8Array, object];
    expect(graph.byteLength).toBeLessThan(readFileSync(file('model.onnx')).byteLength / 4);
    expect(declares(graph)).toBe(true);
    expect(options).toEqual({ intraOpNumThreads: 1, extra: { session: { model_external_initializers_file_folder_path: join(GENERATED, TINY, 'onnx') } } });
    expect(big).toMatchObject({ models: 1, logitsToKeep: 1, stepOutputs: 1 });
    expect(lastRowsDiff(await logits(file('model.onnx'), null), await logits(graph, 0, options), IDS.length)).toBe(0);

    // Bytes handed over (no file to read weights from): rewritten whole.
    await factory.create(new Uint8Array(readFileSync(file('model.onnx'))));
    expect((calls[4]![0] as Uint8Array).byteLength).toBeGreaterThan(readFileSync(file('model.onnx')).byteLength);
    expect(calls[4]![1]).toBeUndefined();
    expect(count.models).toBe(4);

    // A file that cannot be read: onnxruntime is handed the path, to fail in its own words.
    await factory.create(file('missing.onnx'));
    expect(calls[5]![0]).toBe(file('missing.onnx'));
    expect(count.models).toBe(4);
  });

  it('reads an external-data graph\'s weights from its folder and keeps its rows (fp16)', async () => {
    const calls: unknown[][] = [];
    const factory = { create: async (...args: unknown[]) => calls.push(args) };
    installNodeRewrites(factory, 'cpu');
    await factory.create(file('model_fp16.onnx'));
    const [graph, options] = calls[0] as [Uint8Array, object];
    const all = await logits(file('model_fp16.onnx'), null);
    const every = await logits(graph, 0, options);
    expect(every.dims).toEqual(all.dims);
    // float16: the Slice between the final norm and the head keeps a rounding onnxruntime removes from the original (logits-to-keep.test.ts).
    expect(lastRowsDiff(all, every, IDS.length)).toBeLessThan(0.016);
    expect(lastRowsDiff(every, await logits(graph, 1, options), 1)).toBeLessThan(1e-6);
  });

  it('computes, for the rows kept, the numbers of the graph computing every row (fp32: the export itself)', async () => {
    const original = new Uint8Array(readFileSync(file('model.onnx')));
    const rewritten = nodeRewrite(original)!;
    expect(rewritten.logitsToKeep).toBe(true);
    const all = await logits(original, null);
    const every = await logits(rewritten.graph, 0);
    expect(every.dims).toEqual(all.dims);
    expect(lastRowsDiff(all, every, IDS.length)).toBe(0);
    for (const keep of [1, 3]) {
      const kept = await logits(rewritten.graph, keep);
      expect(kept.dims).toEqual([1, keep, all.dims.at(-1)]);
      expect(lastRowsDiff(all, kept, keep)).toBeLessThan(1e-5);
    }
  });

  it('leaves a q4 graph\'s int8 arithmetic as the q4 rewrite alone computes it', async () => {
    const original = new Uint8Array(readFileSync(file('model_q4.onnx')));
    const q4 = nodeQ4Rewrite(original)!;
    const both = nodeRewrite(original)!;
    expect(both).toMatchObject({ logitsToKeep: true, nodes: q4.nodes, head: true });
    const reference = await logits(q4.graph, null);
    expect(lastRowsDiff(reference, await logits(both.graph, 0), IDS.length)).toBe(0);
    expect(lastRowsDiff(reference, await logits(both.graph, 1), 1)).toBeLessThan(1e-5);
  });
});
