/**
 * Logits for the rows asked for only.
 *
 * A hub export computes the logits of every position it is fed: a 576-token state pass of a
 * 49,152-token vocabulary makes 113 MB of float32 logits (the lm_head is a fifth of the pass's
 * arithmetic), and onnxruntime's arena keeps room for them for as long as the page lives, where
 * a decision reads one row. Exports made with transformers.js' own conversion carry an input
 * `num_logits_to_keep` (the last k rows, 0 = all) that the engine already feeds
 * (LanguageModel.forward's `keep`) and transformers.js too (1 while it generates, 0 otherwise).
 *
 * `keepLogitsRows` gives a graph without it that input, at load: the hidden state entering the
 * lm_head is sliced to its last k rows, `Slice(hidden, -k, ∞, axis 1)`, so only those rows are
 * computed. It recognises two shapes of graph, and leaves any other as it is (null):
 *
 * - the lm_head is a MatMul (or MatMulNBits) of the [batch, sequence, hidden] state, followed by
 *   nothing or by element-wise operations only (a Cast, a soft-capping Div/Tanh/Mul): Optimum's
 *   and onnxruntime-genai's exports;
 * - `Reshape(Gemm|MatMul(Reshape(hidden, [-1, h]), W), shape)`: the flattened form this project's
 *   generator writes; the final shape is then taken from the sliced state.
 *
 * The rewritten graph computes, for k = 0, exactly the original (the same nodes on the same
 * rows); test/engine/logits-to-keep.test.ts runs both in onnxruntime for every generated export.
 */
import {
  GRAPH_INITIALIZER,
  GRAPH_INPUT,
  GRAPH_NODE,
  int64Tensor,
  intAttribute,
  NODE_INPUT,
  node,
  type NodeInfo,
  stringField,
  TensorType,
  tensorValue,
  withGraph,
} from './onnx-messages.ts';
import { readGraph } from './onnx-graph.ts';
import { fields, Pieces, type Field } from './onnx-wire.ts';

export const LOGITS_TO_KEEP = 'num_logits_to_keep';

/** Operations that act on each row of the logits alone: slicing rows before them changes nothing else. */
const ROW_WISE = new Set(['Cast', 'Mul', 'Div', 'Add', 'Sub', 'Tanh', 'Softcap']);
const LM_HEAD = new Set(['MatMul', 'MatMulNBits']);


/** The node re-encoded with some of its inputs renamed (by position). */
function renamedInputs(buf: Uint8Array, field: Field, rename: Map<number, string>): Pieces {
  const out = new Pieces();
  let index = 0;
  for (const f of fields(buf, field.payloadStart, field.end)) {
    if (f.number === NODE_INPUT) {
      const name = rename.get(index++);
      if (name !== undefined) {
        stringField(out, NODE_INPUT, name);
        continue;
      }
    }
    out.push(buf.subarray(f.start, f.end));
  }
  return out;
}

interface Plan {
  /** The node whose input 0 (the hidden state) becomes the sliced state, and that state's name. */
  sliced: NodeInfo;
  hidden: string;
  /** The generator's flattened form: the final Reshape, and the lm_head's output (to read V from). */
  reshape?: { node: NodeInfo; head: string };
}

/** Where to slice, or null when the graph is not one of the two recognised shapes. */
function planFor(nodes: NodeInfo[], consumers: Map<string, number>): Plan | null {
  const producer = new Map<string, NodeInfo>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n);
  const only = (name: string) => (consumers.get(name) ?? 0) === 1;
  let at = producer.get('logits');
  if (!at) return null;
  // The generator's form: Reshape(Gemm|MatMul(Reshape(hidden, [-1, h]), W), shape).
  if (at.op === 'Reshape') {
    const head = producer.get(at.inputs[0] ?? '');
    const flatten = head && (head.op === 'Gemm' || head.op === 'MatMul') ? producer.get(head.inputs[0] ?? '') : undefined;
    if (!head || !flatten || flatten.op !== 'Reshape' || !only(head.outputs[0]!) || !only(flatten.outputs[0]!)) return null;
    return { sliced: flatten, hidden: flatten.inputs[0]!, reshape: { node: at, head: head.outputs[0]! } };
  }
  // A MatMul of the [batch, sequence, hidden] state, then row-wise operations only.
  while (ROW_WISE.has(at.op)) {
    const next = producer.get(at.inputs[0] ?? '');
    if (!next || !only(next.outputs[0]!)) return null;
    at = next;
  }
  if (!LM_HEAD.has(at.op)) return null;
  return { sliced: at, hidden: at.inputs[0]! };
}

/**
 * `model` with a `num_logits_to_keep` input that makes it compute the logits of the last k
 * positions only (0: all, as before); null when it has that input already, or is not a graph
 * this recognises (its logits are then computed for every position, as they were).
 */
export function keepLogitsRows(model: Uint8Array): Uint8Array | null {
  const read = readGraph(model);
  if (!read || read.inputs.some((v) => v.name === LOGITS_TO_KEEP)) return null;
  let logitsRank: number | null = null;
  for (const v of read.outputs) if (v.name === 'logits') logitsRank = v.rank;
  if (logitsRank !== 3) return null;
  const plan = planFor([...read.nodes.values()], read.readers);
  if (!plan) return null;

  const p = 'jev_logits_to_keep/';
  const sliced = `${p}hidden`;
  const graph = new Pieces();
  for (const f of read.fields) {
    const n = f.number === GRAPH_NODE ? read.nodes.get(f) : undefined;
    if (n === plan.sliced) {
      // starts = [-k]: the last k rows (k = 0: -0 = 0, every row).
      graph.bytesField(GRAPH_NODE, node('Neg', [LOGITS_TO_KEEP], `${p}neg`));
      graph.bytesField(GRAPH_NODE, node('Reshape', [`${p}neg`, `${p}one`], `${p}starts`));
      graph.bytesField(GRAPH_NODE, node('Slice', [plan.hidden, `${p}starts`, `${p}end`, `${p}one`], sliced));
      graph.bytesField(GRAPH_NODE, renamedInputs(model, f, new Map([[0, sliced]])));
    } else if (plan.reshape && n === plan.reshape.node) {
      // The final shape from the sliced state, [batch, k], and the lm_head's width, [V].
      graph.bytesField(GRAPH_NODE, node('Shape', [sliced], `${p}hidden_shape`));
      graph.bytesField(GRAPH_NODE, node('Slice', [`${p}hidden_shape`, `${p}zero`, `${p}two`, `${p}zero`], `${p}rows_shape`));
      graph.bytesField(GRAPH_NODE, node('Shape', [plan.reshape.head], `${p}head_shape`));
      graph.bytesField(GRAPH_NODE, node('Slice', [`${p}head_shape`, `${p}one`, `${p}two`, `${p}zero`], `${p}vocab`));
      graph.bytesField(GRAPH_NODE, node('Concat', [`${p}rows_shape`, `${p}vocab`], `${p}logits_shape`, [intAttribute('axis', 0)]));
      graph.bytesField(GRAPH_NODE, renamedInputs(model, f, new Map([[1, `${p}logits_shape`]])));
    } else graph.push(model.subarray(f.start, f.end));
  }
  graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${p}zero`, [0n]));
  graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${p}one`, [1n]));
  graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${p}two`, [2n]));
  graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${p}end`, [0x7fffffffffffffffn]));
  graph.bytesField(GRAPH_INPUT, tensorValue(LOGITS_TO_KEEP, TensorType.INT64, 'scalar'));

  return withGraph(model, read.field, graph);
}

