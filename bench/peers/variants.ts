/**
 * Experimental ONNX variants of a generated model, for the per-token profile (profile-engine.ts).
 * They are written outside the repository (default: $TMPDIR/jev-peer-variants, or
 * JEV_PEER_VARIANTS) as model folders `<name>-<variant>` with the original JSON files:
 *
 *   lastlogits  the same graph, but the tied lm_head runs on the last position only (Slice before
 *               the final Gemm): what a `num_logits_to_keep`-style export saves in prefill, where the
 *               stock graph computes and copies out [1, prompt, vocab] logits for one row that is read.
 *   kvonly      no model at all: present.* = Concat(past_key_values.*, one constant position per input token) and
 *               logits = zeros [1, seq, vocab]. Same inputs and outputs as the model, so one forward
 *               pass costs exactly the per-step overhead around the model: transformers.js, feeding
 *               the KV cache into wasm memory, the KV concatenation, copying present.* and the logits
 *               back out, and the engine's own JS.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIMS, ONNX_META, buildLlamaGraph, modelInputNames } from '../../scripts/models/llama-graph.ts';
import { DataType, GraphBuilder } from '../../scripts/models/onnx-graph.ts';
import { ropeTables } from '../../scripts/models/rope.ts';
import { type ModelSpec, SMOLLM2_135M_RANDOM } from '../../scripts/models/specs.ts';
import { generateWeights } from '../../scripts/models/weights.ts';
import { GENERATED } from '../../scripts/models/roots.ts';

export type Variant = 'lastlogits' | 'kvonly';
export const VARIANTS_DIR = process.env['JEV_PEER_VARIANTS'] ?? join(tmpdir(), 'jev-peer-variants');
export const variantName = (spec: ModelSpec, v: Variant) => `${spec.name}-${v}`;

function lastLogitsGraph(spec: ModelSpec): GraphBuilder {
  const g = buildLlamaGraph(spec, generateWeights(spec), ropeTables(spec), 'fp32');
  const at = g.nodes.findIndex((n) => n.name === '/lm_head/Flatten');
  const flatten = g.nodes[at];
  if (!flatten) throw new Error('no /lm_head/Flatten node');
  const last = '/lm_head/LastPosition/output_0';
  g.nodes.splice(at, 0, {
    opType: 'Slice',
    inputs: [flatten.inputs[0]!, g.constInt64([-1]), g.constInt64([1_000_000_000]), g.constInt64([1])],
    outputs: [last],
    name: '/lm_head/LastPosition',
    attrs: {},
  });
  g.nodes[at + 1] = { ...flatten, inputs: [last, flatten.inputs[1]!] };
  const r = g.nodes.findIndex((n) => n.name === '/lm_head/Reshape');
  const reshape = g.nodes[r]!;
  g.nodes[r] = { ...reshape, inputs: [reshape.inputs[0]!, g.constInt64([-1, 1, spec.vocabSize])] };
  g.outputs[0] = { ...g.outputs[0]!, shape: [DIMS.batch, 1, spec.vocabSize] };
  return g;
}

function kvOnlyGraph(spec: ModelSpec): GraphBuilder {
  const g = new GraphBuilder(`${spec.name}-kvonly`);
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const { batch, sequence, past, total } = DIMS;
  const ids = g.input('input_ids', DataType.INT64, [batch, sequence]);
  g.input('attention_mask', DataType.INT64, [batch, total]);
  g.input('position_ids', DataType.INT64, [batch, sequence]);
  // one new position per input token: Expand([1, KV, 1, D] → [1, KV, seq, D])
  const oneKv = g.floatInit('new_position_kv', [1, KV, 1, D], new Float32Array(KV * D).fill(0.5));
  const seqLen = g.op('Slice', [g.op('Shape', [ids], '/kv/ShapeIds'), g.constInt64([1]), g.constInt64([2]), g.constInt64([0])], '/kv/SeqLen');
  const kvShape = g.op('Concat', [g.constInt64([1, KV]), seqLen, g.constInt64([D])], '/kv/Shape', { axis: 0 });
  const fresh = g.op('Expand', [oneKv, kvShape], '/kv/NewPositions');
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    for (const kind of ['key', 'value']) {
      const p = g.input(`past_key_values.${i}.${kind}`, DataType.FLOAT, [batch, KV, past, D]);
      g.op('Concat', [p, fresh], `/kv/${i}/${kind}`, { axis: 2 }, `present.${i}.${kind}`);
    }
  }
  const asFloat = g.op('Cast', [ids], '/logits/Cast', { to: DataType.FLOAT });
  const col = g.op('Unsqueeze', [asFloat, g.constInt64([2])], '/logits/Unsqueeze');
  const zero = g.op('Mul', [col, g.constFloat([0], [])], '/logits/Zero');
  g.op('Expand', [zero, g.constInt64([1, 1, spec.vocabSize])], '/logits/Expand', undefined, 'logits');
  g.output('logits', DataType.FLOAT, [batch, sequence, spec.vocabSize]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.output(`present.${i}.key`, DataType.FLOAT, [batch, KV, total, D]);
    g.output(`present.${i}.value`, DataType.FLOAT, [batch, KV, total, D]);
  }
  if (g.inputs.map((x) => x.name).join() !== modelInputNames(spec).join()) throw new Error('kvonly: inputs differ from the model');
  return g;
}

/** Writes `<outDir>/<spec.name>-<variant>/` (JSON files copied from models/<spec.name>); returns its name. */
export function writeVariant(variant: Variant, spec: ModelSpec = SMOLLM2_135M_RANDOM, outDir = VARIANTS_DIR): string {
  const name = variantName(spec, variant);
  const src = join(GENERATED, spec.name);
  if (!existsSync(join(src, 'config.json'))) throw new Error(`${src} is missing: run npm run models first`);
  const dir = join(outDir, name);
  const onnx = join(dir, 'onnx', 'model.onnx');
  if (existsSync(onnx) && statSync(onnx).mtimeMs > statSync(join(src, 'onnx', 'model.onnx')).mtimeMs) return name;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, 'onnx'), { recursive: true });
  for (const f of readdirSync(src)) if (f.endsWith('.json')) copyFileSync(join(src, f), join(tmp, f));
  const g = variant === 'lastlogits' ? lastLogitsGraph(spec) : kvOnlyGraph(spec);
  g.toModelProto({ ...ONNX_META, docString: `${variant} variant of ${spec.name} (bench/peers/variants.ts)` }).writeToFile(join(tmp, 'onnx', 'model.onnx'));
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return name;
}
