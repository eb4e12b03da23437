/**
 * The shape of every value of a graph, with its symbolic dimensions named, written into the
 * graph's `value_info` (issue 62: where onnxruntime's session creation went).
 *
 * ONNX's own shape inference, which onnxruntime runs while it creates a session, loses a symbolic
 * dimension wherever it cannot compute it: a `Reshape` to `[0, 3, 3, -1, 64]`, a `Range`, a shape
 * computed from `Shape` → `Gather` → `Concat`. Everything downstream then has an unnamed dimension
 * (2,505 of the 2,657 values of the 135M-shaped q4 graph as the load rewrites it). onnxruntime's
 * allocation planner reuses a freed buffer only for a value of the same shape, and a shape with an
 * unnamed dimension is the same as none: every such value joins its free list for good, and each
 * later one scans the whole list (allocation_planner.cc `FindReusableTensor`), so the planning is
 * quadratic in the graph's length: 1.6 s of that graph's 2.0 s creation in onnxruntime-web in Node.
 * With the shapes given, the same session is created in a fifth of the time, with the same
 * numbers (test/engine/symbolic-shapes.test.ts).
 *
 * What is computed here, in the nodes' order, from the graph inputs' shapes: each value's element
 * type and dimensions, as polynomials over the inputs' named dimensions (symbolic-dims.ts), and the
 * contents of the small int64 tensors that shapes are computed from (`Shape`, `Gather`, `Concat`,
 * …), so that a computed `Reshape` gets its dimensions too. An operator not known here, or a
 * dimension that cannot be told (a `Slice` of a symbolic length to a fixed end), leaves that value
 * and what depends on it without an entry, as before. Nothing in the graph changes but its
 * `value_info`.
 */
import { GRAPH_INPUT, GRAPH_NODE, GRAPH_OUTPUT, graphFieldOf, type NodeInfo, tensorValue, TensorType, withGraph } from './onnx-messages.ts';
import { parseTensor, parseValue, readGraph, type ExternalData, type TensorInfo } from './onnx-graph.ts';
import { fields, Pieces, WIRE_BYTES } from './onnx-wire.ts';
import { add, constant, div, mul, quotient, same, sub, symbol, textOf, valueOf, type Dim } from './symbolic-dims.ts';

/** GraphProto.value_info. */
const GRAPH_VALUE_INFO = 13;
const { FLOAT, UINT8, INT32, INT64, BOOL } = TensorType;

/** What is known of a value: its element type, its dimensions, and (small int64 tensors) its elements. */
interface Known {
  type: number | null;
  dims: Dim[] | null;
  values: Dim[] | null;
}

export interface ShapeAnnotation {
  graph: Uint8Array;
  /** How many values got a `value_info` entry. */
  annotated: number;
}

/** `model` with a `value_info` entry for each value whose type and shape are known here; null where none is. */
export function annotateShapes(model: Uint8Array, external: ExternalData = () => null): ShapeAnnotation | null {
  const read = readGraph(model, external);
  if (!read) return null;
  const known = new Map<string, Known>();
  const declared = new Set<string>();
  for (const [name, t] of read.tensors) known.set(name, { type: t.type, dims: t.dims.map(constant), values: int64Values(t) });
  for (const f of read.fields) {
    if (f.wire !== WIRE_BYTES) continue;
    if (f.number === GRAPH_INPUT) {
      const v = parseValue(model, f);
      const dims = v.dims && v.dims.every((d) => d !== null) ? v.dims.map((d) => (typeof d === 'number' ? constant(d) : symbol(d!))) : null;
      if (!known.has(v.name)) known.set(v.name, { type: v.type, dims, values: null });
      declared.add(v.name);
    } else if (f.number === GRAPH_OUTPUT || f.number === GRAPH_VALUE_INFO) declared.add(parseValue(model, f).name);
  }
  const entries = new Pieces();
  let annotated = 0;
  for (const f of read.fields) {
    if (f.number !== GRAPH_NODE || f.wire !== WIRE_BYTES) continue;
    const n = read.nodes.get(f)!;
    const attribute = (name: string) => {
      const t = n.tensors.get(name);
      return t ? parseTensor(model, t, external)[1] : null;
    };
    const outs = infer(n, (name) => (name === '' ? null : (known.get(name) ?? null)), attribute);
    n.outputs.forEach((name, i) => {
      if (name === '') return;
      const k = outs[i] ?? { type: null, dims: null, values: null };
      known.set(name, k);
      if (declared.has(name) || k.type === null || k.dims === null || k.dims.some((d) => (valueOf(d) ?? 0) < 0)) return;
      entries.bytesField(GRAPH_VALUE_INFO, tensorValue(name, k.type, k.dims.map((d) => valueOf(d) ?? textOf(d))));
      annotated++;
    });
  }
  if (annotated === 0) return null;
  const graph = new Pieces();
  for (const f of read.fields) graph.push(model.subarray(f.start, f.end));
  for (const p of entries.parts) graph.push(p);
  return { graph: withGraph(model, read.field, graph), annotated };
}

/** `model` without any `value_info` entries (those `annotateShapes` wrote, and any its export had): where onnxruntime refuses one, it infers every shape itself again. */
export function withoutShapes(model: Uint8Array): Uint8Array {
  const field = graphFieldOf(model);
  if (!field) return model;
  const graph = new Pieces();
  for (const f of fields(model, field.payloadStart, field.end)) if (f.number !== GRAPH_VALUE_INFO || f.wire !== WIRE_BYTES) graph.push(model.subarray(f.start, f.end));
  return withGraph(model, field, graph);
}

// ——— inference ———

const UNKNOWN: Known = { type: null, dims: null, values: null };
const ONE = constant(1);

const SAME_SHAPE = new Set(['Abs', 'Neg', 'Sqrt', 'Sigmoid', 'Tanh', 'Cos', 'Sin', 'Exp', 'Log', 'Relu', 'Erf', 'Reciprocal', 'Floor', 'Ceil', 'Round', 'Softmax', 'LogSoftmax', 'Identity', 'Not', 'Gelu', 'FastGelu', 'QuickGelu', 'BiasGelu', 'RotaryEmbedding']);
const BROADCAST = new Set(['Add', 'Sub', 'Mul', 'Div', 'Pow', 'Max', 'Min', 'Mod', 'Sum', 'Mean']);
const COMPARE = new Set(['Equal', 'Less', 'LessOrEqual', 'Greater', 'GreaterOrEqual', 'And', 'Or', 'Xor']);

/** The outputs of one node, from its inputs. */
function infer(n: NodeInfo, get: (name: string) => Known | null, tensor: (name: string) => TensorInfo | null): Known[] {
  const ins = n.inputs.map((i) => get(i));
  const x = ins[0] ?? null;
  const shaped = (dims: Dim[] | null, type: number | null = x?.type ?? null, values: Dim[] | null = null): Known[] => [{ type, dims, values }];
  const op = n.domain === '' || n.domain === 'ai.onnx' || n.domain === 'com.microsoft' ? n.op : '';
  if (!x && op !== 'Constant') return [];
  if (SAME_SHAPE.has(op)) return shaped(x!.dims);
  if (BROADCAST.has(op) || COMPARE.has(op)) {
    const dims = broadcastAll(ins.map((i) => i?.dims ?? null));
    const values = op === 'Add' || op === 'Sub' || op === 'Mul' || op === 'Div' ? arithmetic(op, ins[0]?.values ?? null, ins[1]?.values ?? null) : null;
    return shaped(dims, COMPARE.has(op) ? BOOL : x!.type, values);
  }
  switch (op) {
    case 'Cast':
      return shaped(x!.dims, n.ints.get('to') ?? null, x!.values);
    case 'Where':
      return shaped(broadcastAll(ins.map((i) => i?.dims ?? null)), ins[1]?.type ?? null);
    case 'Shape': {
      if (!x!.dims) return shaped(null, INT64);
      const r = x!.dims.length;
      const start = clampAxis(n.ints.get('start') ?? 0, r);
      const end = clampAxis(n.ints.get('end') ?? r, r);
      const values = x!.dims.slice(start, Math.max(start, end));
      return shaped([constant(values.length)], INT64, values);
    }
    case 'Gather': {
      const idx = ins[1];
      if (!x!.dims || !idx?.dims) return shaped(null);
      const axis = normalize(n.ints.get('axis') ?? 0, x!.dims.length);
      if (axis === null) return shaped(null);
      const dims = [...x!.dims.slice(0, axis), ...idx.dims, ...x!.dims.slice(axis + 1)];
      let values: Dim[] | null = null;
      if (x!.values && idx.values && axis === 0) {
        const picked = idx.values.map((v) => {
          const i = valueOf(v);
          return i === null ? null : (x!.values![i < 0 ? i + x!.values!.length : i] ?? null);
        });
        values = picked.every((p) => p !== null) ? (picked as Dim[]) : null;
      }
      return shaped(dims, x!.type, values);
    }
    case 'Unsqueeze': {
      const axes = n.lists.get('axes') ?? numbers(ins[1]?.values);
      if (!x!.dims || !axes) return shaped(null);
      const rank = x!.dims.length + axes.length;
      const at = axes.map((v) => normalize(v, rank));
      if (at.some((v) => v === null)) return shaped(null);
      const dims: Dim[] = [];
      for (let i = 0, j = 0; i < rank; i++) dims.push(at.includes(i) ? ONE : x!.dims[j++]!);
      return shaped(dims, x!.type, x!.values);
    }
    case 'Squeeze': {
      const axes = n.lists.get('axes') ?? numbers(ins[1]?.values);
      if (!x!.dims) return shaped(null);
      const r = x!.dims.length;
      const drop = axes ? axes.map((v) => normalize(v, r)) : x!.dims.map((d, i) => (valueOf(d) === 1 ? i : null)).filter((i) => i !== null);
      if (!axes && x!.dims.some((d) => valueOf(d) === null)) return shaped(null);
      if (drop.some((v) => v === null)) return shaped(null);
      return shaped(x!.dims.filter((_, i) => !drop.includes(i)), x!.type, x!.values);
    }
    case 'Concat': {
      const all = ins.map((i) => i?.dims ?? null);
      if (all.some((d) => d === null) || all.length === 0) return shaped(null);
      const r = all[0]!.length;
      const axis = normalize(n.ints.get('axis') ?? 0, r);
      if (axis === null || all.some((d) => d!.length !== r)) return shaped(null);
      const dims = all[0]!.map((d, i) => (i === axis ? all.map((s) => s![i]!).reduce(add) : d));
      const values = ins.every((i) => i?.values) ? ins.flatMap((i) => i!.values!) : null;
      return shaped(dims, x!.type, values);
    }
    case 'Reshape': {
      const target = ins[1]?.values;
      if (!x!.dims || !target) return shaped(null);
      const allowZero = (n.ints.get('allowzero') ?? 0) !== 0;
      const dims: (Dim | null)[] = target.map((t, i) => {
        const v = valueOf(t);
        if (v === 0 && !allowZero) return x!.dims![i] ?? null;
        return v === -1 ? null : t;
      });
      const open = dims.filter((d) => d === null).length;
      if (open > 1 || target.some((t, i) => dims[i] === null && valueOf(t) !== -1)) return shaped(null);
      if (open === 1) {
        const rest = quotient(x!.dims, dims.filter((d): d is Dim => d !== null));
        if (!rest) return shaped(null);
        dims[dims.indexOf(null)] = rest;
      }
      return shaped(dims as Dim[], x!.type, x!.values && dims.length === 1 ? x!.values : null);
    }
    case 'Transpose': {
      if (!x!.dims) return shaped(null);
      const perm = n.lists.get('perm') ?? x!.dims.map((_, i) => x!.dims!.length - 1 - i);
      return shaped(perm.map((p) => x!.dims![p]!));
    }
    case 'MatMul':
    case 'MatMulInteger':
    case 'MatMulIntegerToFloat': {
      const dims = matmul(x!.dims, ins[1]?.dims ?? null);
      const type = op === 'MatMulInteger' ? INT32 : op === 'MatMulIntegerToFloat' ? (ins[2]?.type ?? null) : x!.type;
      return shaped(dims, type);
    }
    case 'MatMulNBits': {
      const out = n.ints.get('N');
      if (!x!.dims || out === undefined) return shaped(null);
      return shaped([...x!.dims.slice(0, -1), constant(out)]);
    }
    case 'Gemm': {
      const b = ins[1]?.dims;
      if (!x!.dims || !b || x!.dims.length !== 2 || b.length !== 2) return shaped(null);
      const m = n.ints.get('transA') ? x!.dims[1]! : x!.dims[0]!;
      const nn = n.ints.get('transB') ? b[0]! : b[1]!;
      return shaped([m, nn]);
    }
    case 'ReduceMean':
    case 'ReduceSum':
    case 'ReduceMax':
    case 'ReduceMin':
    case 'ReduceProd':
    case 'ReduceL2':
    case 'ReduceSumSquare': {
      if (!x!.dims) return shaped(null);
      const r = x!.dims.length;
      const given = n.lists.get('axes') ?? (n.inputs[1] ? numbers(ins[1]?.values) : []);
      if (given === null) return shaped(null);
      const axes = given.length === 0 ? ((n.ints.get('noop_with_empty_axes') ?? 0) ? [] : x!.dims.map((_, i) => i)) : given.map((v) => normalize(v, r));
      if (axes.some((v) => v === null)) return shaped(null);
      const keep = (n.ints.get('keepdims') ?? 1) !== 0;
      const dims = x!.dims.flatMap((d, i) => (axes.includes(i) ? (keep ? [ONE] : []) : [d]));
      return shaped(dims);
    }
    case 'Slice':
      return slice(x!, ins, n.inputs, n);
    case 'Split': {
      if (!x!.dims) return [];
      const axis = normalize(n.ints.get('axis') ?? 0, x!.dims.length);
      const sizes = n.lists.get('split') ?? numbers(ins[1]?.values) ?? evenSplit(axis === null ? null : x!.dims[axis]!, n.outputs.length);
      if (axis === null || !sizes || sizes.length !== n.outputs.length) return [];
      return sizes.map((s) => ({ type: x!.type, dims: x!.dims!.map((d, i) => (i === axis ? constant(s) : d)), values: null }));
    }
    case 'Range': {
      const [start, limit, delta] = [ins[0]?.values, ins[1]?.values, ins[2]?.values];
      const step = delta && delta.length === 1 ? valueOf(delta[0]!) : null;
      if (!start || !limit || start.length !== 1 || limit.length !== 1 || step !== 1) return shaped(null);
      return shaped([sub(limit[0]!, start[0]!)]);
    }
    case 'Expand': {
      const target = ins[1]?.values;
      return shaped(target && x!.dims ? broadcast(x!.dims, target) : null);
    }
    case 'ConstantOfShape': {
      const value = tensor('value');
      return shaped(x!.values, value ? value.type : FLOAT);
    }
    case 'Constant': {
      const t = tensor('value');
      return t ? shaped(t.dims.map(constant), t.type, int64Values(t)) : [];
    }
    case 'QuantizeLinear':
      return shaped(x!.dims, ins[2]?.type ?? UINT8);
    case 'DequantizeLinear':
      return shaped(x!.dims, ins[1]?.type ?? null);
    case 'DynamicQuantizeLinear':
      return [{ type: UINT8, dims: x!.dims, values: null }, { type: FLOAT, dims: [], values: null }, { type: UINT8, dims: [], values: null }];
    case 'SimplifiedLayerNormalization':
    case 'LayerNormalization':
    case 'SkipSimplifiedLayerNormalization':
    case 'SkipLayerNormalization': {
      // The normalized output (and the skip's sum, the last output) have the input's shape; the statistics are left alone.
      const skip = op.startsWith('Skip');
      return n.outputs.map((_, i) => (i === 0 || (skip && i === 3) ? { type: x!.type, dims: x!.dims, values: null } : UNKNOWN));
    }
    case 'GroupQueryAttention': {
      // The attention's output: the query's shape, or for a packed query, key and value ([q | k | v] heads) the query's part of it.
      if (!x!.dims || x!.dims.length !== 3) return [];
      const heads = n.ints.get('num_heads');
      const kvHeads = n.ints.get('kv_num_heads');
      const hidden = n.inputs[1] ? x!.dims[2]! : heads && kvHeads ? div(mul(x!.dims[2]!, constant(heads)), constant(heads + 2 * kvHeads)) : null;
      return hidden ? [{ type: x!.type, dims: [x!.dims[0]!, x!.dims[1]!, hidden], values: null }] : [];
    }
    default:
      return [];
  }
}

function slice(x: Known, ins: (Known | null)[], names: string[], n: NodeInfo): Known[] {
  const starts = n.lists.get('starts') ?? numbersOrDims(ins[1]?.values);
  const ends = n.lists.get('ends') ?? numbersOrDims(ins[2]?.values);
  if (!x.dims || !starts || !ends) return [{ type: x.type, dims: null, values: null }];
  const r = x.dims.length;
  const axes = n.lists.get('axes') ?? (names[3] ? numbers(ins[3]?.values) : starts.map((_, i) => i));
  const steps = names[4] ? numbers(ins[4]?.values) : starts.map(() => 1);
  if (!axes || !steps) return [{ type: x.type, dims: null, values: null }];
  const dims = [...x.dims];
  let values = x.values;
  for (let i = 0; i < axes.length; i++) {
    const axis = normalize(axes[i]!, r);
    const length = axis === null || steps[i] !== 1 ? null : sliced(dims[axis]!, starts[i]!, ends[i]!);
    if (length === null) return [{ type: x.type, dims: null, values: null }];
    if (values && r === 1) {
      const count = values.length;
      const s = typeof starts[i] === 'number' ? clampIndex(starts[i] as number, count) : null;
      const e = typeof ends[i] === 'number' ? clampIndex(ends[i] as number, count) : null;
      values = s === null || e === null ? null : values.slice(s, Math.max(s, e));
    } else values = null;
    dims[axis!] = length;
  }
  return [{ type: x.type, dims, values }];
}

/**
 * The length of `dim` sliced from `start` to `end` (step 1), where it can be told without knowing
 * the dimension: a computed bound is taken as it is only where it cannot be negative (all its
 * coefficients positive: a size), and within the dimension.
 */
function sliced(dim: Dim, start: number | Dim, end: number | Dim): Dim | null {
  const n = valueOf(dim);
  const huge = (v: number | Dim) => typeof v === 'number' && v >= 2 ** 31;
  const size = (v: number | Dim) => typeof v !== 'number' && v.size > 0 && [...v.values()].every((c) => c > 0);
  if (n !== null && typeof start === 'number' && typeof end === 'number') return constant(Math.max(0, clampIndex(end, n) - clampIndex(start, n)));
  if (typeof start === 'number' && start >= 0 && huge(end)) return sub(dim, constant(start));
  if (typeof start === 'number' && start < 0 && huge(end)) return constant(-start); // the last -start (the dimension taken to be at least that long)
  if (typeof start === 'number' && start >= 0 && size(end)) return sub(end as Dim, constant(start));
  if (size(start) && huge(end)) return sub(dim, start as Dim);
  return null;
}

function matmul(a: Dim[] | null, b: Dim[] | null): Dim[] | null {
  if (!a || !b || a.length === 0 || b.length === 0) return null;
  if (a.length === 1 && b.length === 1) return [];
  if (b.length === 1) return a.slice(0, -1);
  if (a.length === 1) return [...b.slice(0, -2), b[b.length - 1]!];
  const batch = broadcast(a.slice(0, -2), b.slice(0, -2));
  return batch && [...batch, a[a.length - 2]!, b[b.length - 1]!];
}

function broadcastAll(shapes: (Dim[] | null)[]): Dim[] | null {
  let out: Dim[] | null = [];
  for (const s of shapes) out = out && s ? broadcast(out, s) : null;
  return shapes.length ? out : null;
}

/** Numpy broadcasting; two different symbolic dimensions are taken to be equal (the first's name kept). */
function broadcast(a: readonly Dim[], b: readonly Dim[]): Dim[] | null {
  const r = Math.max(a.length, b.length);
  const out: Dim[] = [];
  for (let i = 0; i < r; i++) {
    const x = a[a.length - r + i] ?? ONE;
    const y = b[b.length - r + i] ?? ONE;
    const vx = valueOf(x);
    const vy = valueOf(y);
    if (vx === 1) out.push(y);
    else if (vy === 1 || same(x, y)) out.push(x);
    else if (vx !== null && vy !== null) return null;
    else out.push(vx !== null ? x : vy !== null ? y : x);
  }
  return out;
}

function arithmetic(op: string, a: Dim[] | null, b: Dim[] | null): Dim[] | null {
  if (!a || !b || (a.length !== b.length && a.length !== 1 && b.length !== 1)) return null;
  const n = Math.max(a.length, b.length);
  const out: Dim[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length === 1 ? 0 : i]!;
    const y = b[b.length === 1 ? 0 : i]!;
    const v = op === 'Add' ? add(x, y) : op === 'Sub' ? sub(x, y) : op === 'Mul' ? mul(x, y) : div(x, y);
    if (!v) return null;
    out.push(v);
  }
  return out;
}

function evenSplit(dim: Dim | null, parts: number): number[] | null {
  const n = dim && valueOf(dim);
  return n && n % parts === 0 ? new Array<number>(parts).fill(n / parts) : null;
}

const normalize = (axis: number, rank: number): number | null => {
  const v = axis < 0 ? axis + rank : axis;
  return v >= 0 && v < rank ? v : null;
};
const clampAxis = (v: number, rank: number) => Math.min(Math.max(v < 0 ? v + rank : v, 0), rank);
const clampIndex = (v: number, n: number) => Math.min(Math.max(v < 0 ? v + n : v, 0), n);

function numbers(values: Dim[] | null | undefined): number[] | null {
  if (!values) return null;
  const out = values.map(valueOf);
  return out.every((v) => v !== null) ? (out as number[]) : null;
}

function numbersOrDims(values: Dim[] | null | undefined): (number | Dim)[] | null {
  return values ? values.map((v) => valueOf(v) ?? v) : null;
}

// ——— reading ———

/** The elements of a small int64 (or int32) tensor, or null. */
function int64Values(t: TensorInfo): Dim[] | null {
  const count = t.dims.reduce((p, d) => p * d, 1);
  if ((t.type !== INT64 && t.type !== INT32) || count > 64 || !t.data) return null;
  const width = t.type === INT64 ? 8 : 4;
  if (t.data.byteLength !== count * width) return null;
  const view = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return Array.from({ length: count }, (_, i) => constant(width === 8 ? Number(view.getBigInt64(i * 8, true)) : view.getInt32(i * 4, true)));
}

