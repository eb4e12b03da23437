/**
 * 4-bit projections computed with 8-bit activations, on onnxruntime's native CPU kernels (Node).
 *
 * A hub `model_q4.onnx` writes its MatMulNBits nodes without `accuracy_level` (0: unset), so
 * onnxruntime-node dequantizes each weight block to float32 and multiplies in float32. With
 * `accuracy_level` 4, MLAS's SQNBit kernels quantize each activation block to int8 and take the
 * product in integers — what llama.cpp's Q4_0 × Q8_0 dot product does, and what the page's wasm
 * path does with its int8 projections (int8-projections.ts). Measured on the 135M-shaped model
 * (1 thread, one decode step at 400 tokens of context, onnxruntime-node 1.30.0's profiler): the
 * MatMulNBits kernels 28.9 -> 12.0 ms a step.
 *
 * `withInt8Accuracy` sets `accuracy_level` to 4 on every com.microsoft MatMulNBits node below it
 * (replacing an attribute of a lower level); null where the model has none to raise. Every other
 * field is copied as it was.
 */
import { ATTRIBUTE_NAME, GRAPH_NODE, graphFieldOf, intAttribute, NODE_ATTRIBUTE, parseNode, text, withGraph } from './onnx-messages.ts';
import { fields, Pieces, WIRE_BYTES } from './onnx-wire.ts';

/** MLAS's int8 compute for MatMulNBits (onnxruntime's contrib op schema: 0 unset, 1 fp32, 2 fp16, 3 bf16, 4 int8). */
export const INT8_ACCURACY = 4;

export function withInt8Accuracy(model: Uint8Array): { graph: Uint8Array; nodes: number } | null {
  const graphField = graphFieldOf(model);
  if (!graphField) return null;
  const graph = new Pieces();
  let nodes = 0;
  for (const f of fields(model, graphField.payloadStart, graphField.end)) {
    if (f.number === GRAPH_NODE && f.wire === WIRE_BYTES) {
      const n = parseNode(model, f);
      if (n.op === 'MatMulNBits' && n.domain === 'com.microsoft' && (n.ints.get('accuracy_level') ?? 0) < INT8_ACCURACY) {
        const node = new Pieces();
        for (const part of fields(model, f.payloadStart, f.end)) {
          if (part.number === NODE_ATTRIBUTE && part.wire === WIRE_BYTES && attributeName(model, part) === 'accuracy_level') continue;
          node.push(model.subarray(part.start, part.end));
        }
        node.bytesField(NODE_ATTRIBUTE, intAttribute('accuracy_level', INT8_ACCURACY));
        graph.bytesField(GRAPH_NODE, node);
        nodes++;
        continue;
      }
    }
    graph.push(model.subarray(f.start, f.end));
  }
  return nodes === 0 ? null : { graph: withGraph(model, graphField, graph), nodes };
}

function attributeName(buf: Uint8Array, attribute: { payloadStart: number; end: number }): string {
  for (const a of fields(buf, attribute.payloadStart, attribute.end)) if (a.number === ATTRIBUTE_NAME) return text(buf, a);
  return '';
}
