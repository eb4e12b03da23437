/**
 * The in-process server's q4 sessions compute their 4-bit projections with 8-bit activations
 * (engine/graph/int8-accuracy.ts) and their float32 lm_head as an 8-bit MatMulNBits
 * (engine/graph/nbits-head.ts), installed in the engine's thread by server/node-session-rewrites.ts. Checked against independent readings: every MatMulNBits of a
 * generated q4 export gets `accuracy_level` 4 and every other node is byte for byte the same; the
 * rewritten graph runs in onnxruntime-node and its logits stay within the int8 activations' error
 * of the original's; and the served q4 engine answers decisions that differ from the unrewritten
 * Node engine's (the rewrite is in effect) by no more than that error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionResponse } from '../../src/contract/index.ts';
import { withInt8Accuracy } from '../../src/engine/graph/int8-accuracy.ts';
import { withNbitsHead } from '../../src/engine/graph/nbits-head.ts';
import { nodeQ4Rewrite } from '../../src/server/node-session-rewrites.ts';
import { GRAPH_NODE, graphFieldOf, parseNode } from '../../src/engine/graph/onnx-messages.ts';
import { readGraph } from '../../src/engine/graph/onnx-graph.ts';
import { fields } from '../../src/engine/graph/onnx-wire.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { embeddedOptions, post } from './support/served.ts';

const FILE = join(GENERATED, TINY, 'onnx', 'model_q4.onnx');

/** The graph's nodes, each as its op, its accuracy_level and its bytes. */
function nodesOf(model: Uint8Array): { op: string; level: number | undefined; bytes: string }[] {
  const g = graphFieldOf(model)!;
  return [...fields(model, g.payloadStart, g.end)]
    .filter((f) => f.number === GRAPH_NODE)
    .map((f) => {
      const n = parseNode(model, f);
      return { op: n.op, level: n.ints.get('accuracy_level'), bytes: Buffer.from(model.subarray(f.start, f.end)).toString('base64') };
    });
}

describe('4-bit projections with 8-bit activations (accuracy_level 4)', () => {
  const original = new Uint8Array(readFileSync(FILE));

  it('raises every MatMulNBits and leaves every other node as it was', () => {
    const rewritten = withInt8Accuracy(original)!;
    expect(rewritten).not.toBeNull();
    const before = nodesOf(original);
    const after = nodesOf(rewritten.graph);
    expect(after.map((n) => n.op)).toEqual(before.map((n) => n.op));
    const projections = before.filter((n) => n.op === 'MatMulNBits').length;
    expect(projections).toBeGreaterThan(0);
    expect(rewritten.nodes).toBe(projections);
    for (const [i, n] of after.entries()) {
      if (n.op === 'MatMulNBits') expect(n.level).toBe(4);
      else expect(n.bytes).toBe(before[i]!.bytes);
    }
    // Nothing left to raise.
    expect(withInt8Accuracy(rewritten.graph)).toBeNull();
  });

  it('makes the float32 lm_head an 8-bit MatMulNBits whose weights dequantize to within half a step of the float matrix', () => {
    const raised = withInt8Accuracy(original)!;
    const head = withNbitsHead(raised.graph)!;
    expect(head).not.toBeNull();
    const before = nodesOf(raised.graph);
    const after = nodesOf(head.graph);
    expect(before.filter((n) => n.op === 'Gemm')).toHaveLength(1);
    expect(after.filter((n) => n.op === 'Gemm')).toHaveLength(0);
    expect(after.filter((n) => n.op === 'MatMulNBits')).toHaveLength(before.filter((n) => n.op === 'MatMulNBits').length + 1);
    // An independent reading of the new initializers: each weight within half a quantization step of the float one.
    const g = readGraph(head.graph)!;
    const q = g.tensors.get('jev_nbits_head/weight')!;
    const scales = g.tensors.get('jev_nbits_head/scales')!;
    const gemm = [...readGraph(raised.graph)!.nodes.values()].find((n) => n.op === 'Gemm')!;
    const w = readGraph(raised.graph)!.tensors.get(gemm.inputs[1]!)!;
    const [N, K] = w.dims as [number, number];
    expect(q.dims).toEqual([N, K / 32, 32]);
    const wf = new Float32Array(w.data!.slice().buffer);
    const sf = new Float32Array(scales.data!.slice().buffer);
    let worst = 0;
    for (let n = 0; n < N; n += 7) for (let k = 0; k < K; k++) {
      const s = sf[n * (K / 32) + Math.floor(k / 32)]!;
      worst = Math.max(worst, Math.abs((q.data![n * K + k]! - 128) * s - wf[n * K + k]!) / s);
    }
    expect(worst).toBeLessThanOrEqual(0.5 + 1e-4);
    // A float32 graph (no MatMulNBits) keeps its exact head.
    expect(withNbitsHead(new Uint8Array(readFileSync(join(GENERATED, TINY, 'onnx', 'model.onnx'))))).toBeNull();
  });

  it('runs in onnxruntime-node, its logits within the int8 activations\' error of the original', async () => {
    const feeds = async (s: ort.InferenceSession) => {
      const out: Record<string, ort.Tensor> = {};
      const ids = [1, 45, 499, 173, 170, 43, 172];
      for (const name of s.inputNames) {
        if (name === 'input_ids') out[name] = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
        else if (name === 'attention_mask') out[name] = new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
        else if (name === 'position_ids') out[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map((_, i) => BigInt(i))), [1, ids.length]);
        else if (name === 'num_logits_to_keep') out[name] = new ort.Tensor('int64', [0n], []);
        else if (name.startsWith('past_key_values')) {
          const meta = s.inputMetadata.find((m) => m.name === name) as { shape?: (number | string)[] } | undefined;
          const dims = (meta?.shape ?? [1, 1, 0, 1]).map((d, k) => (typeof d === 'number' ? d : k === 2 ? 0 : 1));
          out[name] = new ort.Tensor('float32', new Float32Array(0), dims);
        }
      }
      return out;
    };
    const a = await ort.InferenceSession.create(original);
    const b = await ort.InferenceSession.create(nodeQ4Rewrite(original)!.graph);
    const la = (await a.run(await feeds(a)))['logits']!.data as Float32Array;
    const lb = (await b.run(await feeds(b)))['logits']!.data as Float32Array;
    expect(lb.length).toBe(la.length);
    let diff = 0;
    let scale = 0;
    for (let i = 0; i < la.length; i++) {
      diff = Math.max(diff, Math.abs(la[i]! - lb[i]!));
      scale = Math.max(scale, Math.abs(la[i]!));
    }
    expect(diff).toBeGreaterThan(0); // a different kernel ran
    expect(diff / scale).toBeLessThan(0.05);
    await a.release();
    await b.release();
  });
});

describe('the served q4 engine', () => {
  let server: RunningServer;
  let plain: JevClient;
  beforeAll(async () => {
    server = await startServer(embeddedOptions(TINY, { dtype: 'q4' }));
    ({ client: plain } = await localClient(GENERATED, TINY, {}, {}, {}));
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    plain?.terminate();
  });

  it('answers with the rewrite in effect, within its error of the unrewritten Node engine', async () => {
    const body = { model: 'jev', state: 'The parcel arrived broken and I want my money back.', questions: { refund: { type: 'noul', instructions: 'Is a refund asked for?' }, mood: { type: 'choice', instructions: 'Mood?', criteria: { calm: null, angry: null, sad: null } } } };
    const res = await post(server, '/inference/jev/api/alpha/decisions', body);
    expect(res.status, await res.clone().text()).toBe(200);
    const served = (await res.json()) as DecisionResponse;
    await plain.load({ model: TINY, host: 'http://unused.invalid', device: 'auto', dtype: 'q4' } as never);
    const reference = await plain.decisions.create(body);
    expect(served.model).toBe(reference.model);
    let diff = 0;
    const r = reference.answers['mood']!;
    const s = served.answers['mood']!;
    if (r.type !== 'choice' || s.type !== 'choice') throw new Error('mood is a choice');
    for (const k of ['calm', 'angry', 'sad']) diff = Math.max(diff, Math.abs(r.probabilities[k]! - s.probabilities[k]!));
    const [rn, sn] = [reference.answers['refund']!, served.answers['refund']!];
    if (rn.type !== 'noul' || sn.type !== 'noul') throw new Error('refund is noul');
    diff = Math.max(diff, Math.abs(rn.noul - sn.noul));
    expect(diff).toBeGreaterThan(1e-7);
    expect(diff).toBeLessThan(0.05);
  }, 120_000);
});
