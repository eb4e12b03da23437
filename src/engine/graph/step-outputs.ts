/**
 * The keys and values a pass adds, as outputs of their own.
 *
 * An export returns each layer's cache as `present.L.key|value = Concat(past_key_values.L…, new, axis
 * 2)`: the whole cache, past and new, in a new tensor at every pass. onnxruntime-node hands every
 * output back to JavaScript as a copy, so a decoding step over a 370-token cache copies 17 MB a row
 * out of onnxruntime for one new position (docs/extraction.md, Cost).
 *
 * `withStepOutputs` adds, for every such `present` output, a graph output `jev_step/present.L…`
 * holding the Concat's second input: the positions this pass added, `[batch, heads, new, head
 * dim]`. The graph is otherwise unchanged (`present` is still an output, the same numbers). A pass
 * that fetches only the logits and these (LanguageModel's rows written in place, model/kv-rows.ts)
 * gets what it adds and nothing it already had. Null where any `present` output is made another
 * way (GroupQueryAttention, which updates a cache of its own) or the graph has none.
 */
import { GRAPH_NODE, GRAPH_OUTPUT, node, TensorType, tensorValue, withGraph } from './onnx-messages.ts';
import { readGraph } from './onnx-graph.ts';
import { Pieces } from './onnx-wire.ts';
import { STEP_PREFIX, stepOutputName } from '../runtime/step-output-names.ts';

/** `model` with a step output beside every `present` output (see above); null where it does not apply or is there already. */
export function withStepOutputs(model: Uint8Array): Uint8Array | null {
  const read = readGraph(model);
  if (!read) return null;
  const presents = read.outputs.filter((o) => o.name.startsWith('present'));
  if (presents.length === 0 || read.outputs.some((o) => o.name.startsWith(STEP_PREFIX))) return null;
  const producer = new Map<string, { op: string; inputs: string[]; axis: number | undefined }>();
  for (const n of read.nodes.values()) for (const o of n.outputs) producer.set(o, { op: n.op, inputs: n.inputs, axis: n.ints.get('axis') });
  const added = new Map<string, { from: string; type: number }>();
  for (const present of presents) {
    const p = producer.get(present.name);
    // [batch, heads, sequence, head dim], concatenated along the sequence: axis 2, or -2.
    if (!p || p.op !== 'Concat' || p.inputs.length !== 2 || !p.inputs[0]!.startsWith('past_key_values') || (p.axis !== 2 && p.axis !== -2)) return null;
    added.set(stepOutputName(present.name), { from: p.inputs[1]!, type: present.type ?? TensorType.FLOAT });
  }
  const graph = new Pieces();
  for (const f of read.fields) graph.push(model.subarray(f.start, f.end));
  for (const [name, { from, type }] of added) {
    graph.bytesField(GRAPH_NODE, node('Identity', [from], name));
    graph.bytesField(GRAPH_OUTPUT, tensorValue(name, type, 'unknown'));
  }
  return withGraph(model, read.field, graph);
}
