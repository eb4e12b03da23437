/**
 * A small graph with a token embedding and an lm_head, as the head rewrites (int8-head.ts,
 * tied-head.ts) find them in an export: ids [1, S] → Gather(E) → `embedded`; flattened →
 * Gemm(x, E, transB) (tied) or MatMul(x, W) (untied) → `logits` [1, S, V].
 */
import { DataType, GraphBuilder } from '../../scripts/models/onnx-graph.ts';
import type { OrtWeb } from './ort-web.ts';

/** `alpha`: the Gemm scaled (a form the rewrites leave); `thirdReader`: E read by a Shape too. */
export function headGraph(e: Float32Array, v: number, h: number, opts: { opset: number; untied?: Float32Array; alpha?: boolean; thirdReader?: boolean }): Uint8Array {
  const g = new GraphBuilder('head');
  const ids = g.input('input_ids', DataType.INT64, [1, 's']);
  g.floatInit('embed.weight', [v, h], e);
  const embedded = g.op('Gather', ['embed.weight', ids], 'embed/Gather', { axis: 0 }, 'embedded');
  g.output(embedded, DataType.FLOAT, [1, 's', h]);
  const flat = g.op('Reshape', [embedded, g.constInt64([-1, h])], 'lm_head/Flatten');
  let head: string;
  if (opts.untied) {
    g.floatInit('lm_head.weight.T', [h, v], opts.untied);
    head = g.op('MatMul', [flat, 'lm_head.weight.T'], 'lm_head/MatMul');
  } else head = g.op('Gemm', [flat, 'embed.weight'], 'lm_head/Gemm', { transB: 1, ...(opts.alpha ? { alpha: { float: 2 } } : {}) });
  const logits = g.op('Reshape', [head, g.constInt64([1, -1, v])], 'lm_head/Reshape', undefined, 'logits');
  g.output(logits, DataType.FLOAT, [1, 's', v]);
  if (opts.thirdReader) g.output(g.op('Shape', ['embed.weight'], 'embed/Shape'), DataType.INT64, [2]);
  return g.toModelProto({ irVersion: 8, opset: opts.opset, producerName: 'test', producerVersion: '1' }).toBytes();
}

/** `embedded` and `logits` of `graph` (with `mount` as its external data) for `ids`, in a session of its own. */
export async function runHeadGraph(ort: OrtWeb, graph: Uint8Array, mount: { path: string; data: Uint8Array } | null, ids: number[]): Promise<{ embedded: Float32Array; logits: Float32Array }> {
  const session = await ort.InferenceSession.create(graph, mount ? { externalData: [mount] } : {});
  try {
    const out = await session.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]) });
    const result = { embedded: Float32Array.from(out['embedded']!.data as Float32Array), logits: Float32Array.from(out['logits']!.data as Float32Array) };
    for (const t of Object.values(out)) t.dispose();
    return result;
  } finally {
    await session.release();
  }
}
