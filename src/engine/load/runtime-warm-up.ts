import { GRAPH_INPUT, GRAPH_NODE, GRAPH_OUTPUT, MODEL_GRAPH, MODEL_OPSET_IMPORT, node, stringField, tensorValue, TensorType, varintField } from '../graph/onnx-messages.ts';
import { Pieces } from '../graph/onnx-wire.ts';

/** onnxruntime-web's session factory, as far as the warm-up uses it. */
export interface WarmUpFactory {
  create(model: Uint8Array, options: { executionProviders: string[] }): Promise<{ release(): Promise<void> }>;
}

/**
 * onnxruntime-web compiles and instantiates its WebAssembly module (17 MB; its threads started with
 * it) when the first session of a worker is created: after the load has read the model's files
 * and made its rewrites, one step after the other. `warmUpRuntime` creates a session of a graph of
 * one Identity node at the start of the load instead, so that the module is compiled while the
 * tokenizer and the model's files are read (docs/benchmarks.md, "Where a load goes"). The model's
 * own session then finds the runtime ready. Settles (never rejects) once the tiny session is gone.
 *
 * For a `wasm` load only: onnxruntime-web initializes the runtime once per backend name and
 * refuses a second initialization while one runs, so a `webgpu` session created before the
 * warm-up's `wasm` initialization has finished would fail (load-model.ts).
 */
export async function warmUpRuntime(factory: WarmUpFactory): Promise<void> {
  try {
    const session = await factory.create(identityModel(), { executionProviders: ['wasm'] });
    await session.release();
  } catch {
    // Nothing is lost: the model's session initializes the runtime, as before.
  }
}

/** A ModelProto (IR 7, opset 13) of one Identity node from a float scalar `x` to `y`. */
export function identityModel(): Uint8Array {
  const opset = new Pieces();
  stringField(opset, 1, '');
  varintField(opset, 2, 13);
  const graph = new Pieces();
  graph.bytesField(GRAPH_NODE, node('Identity', ['x'], 'y'));
  stringField(graph, 2, 'jev-warm-up');
  graph.bytesField(GRAPH_INPUT, tensorValue('x', TensorType.FLOAT, 'scalar'));
  graph.bytesField(GRAPH_OUTPUT, tensorValue('y', TensorType.FLOAT, 'scalar'));
  const model = new Pieces();
  varintField(model, 1, 7); // ir_version
  model.bytesField(MODEL_OPSET_IMPORT, opset);
  model.bytesField(MODEL_GRAPH, graph);
  return model.concat();
}
