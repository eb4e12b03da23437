import { externalizeWeights } from '../graph/externalize-weights.ts';
import { fusedAttentionOps } from '../graph/fused-attention.ts';
import { INT8_HEAD_WEIGHTS, int8Head } from '../graph/int8-head.ts';
import { kernelHead } from '../graph/kernel-head.ts';
import { INT8_WEIGHTS, int8Projections } from '../graph/int8-projections.ts';
import { TIED_HEAD_WEIGHTS, tiedHead } from '../graph/tied-head.ts';
import { annotateShapes } from '../graph/symbolic-shapes.ts';
import { keepLogitsRows } from '../graph/logits-to-keep.ts';
import { Int8HeadKernel } from '../runtime/int8-head-kernel.ts';
import type { EngineStatus } from '../../protocol/engine-api.ts';

/**
 * The name under which a model's own file is mounted as the external data of its externalized
 * graph (externalize-weights.ts). Not a file anywhere: a key of onnxruntime-web's mount table.
 */
export const INLINE_WEIGHTS = 'jev-inline-weights';

/** `EngineStatus.int8Head`: which readers were rewritten, whether the engine's own kernel computes them (int8-head-kernel.ts), and the bytes. */
export type Int8HeadReport = NonNullable<EngineStatus['int8Head']>;

export interface SessionRewriteOptions {
  /** Rewrite 4-bit MatMulNBits into 8-bit integer products (int8-projections.ts): on wasm, whose MatMulNBits has no 4-bit kernel. */
  int8Projections?: boolean;
  /** Rewrite the embedding Gather and the lm_head product to read one int8 matrix with a scale per token (int8-head.ts). */
  int8Head?: boolean;
  /** With `int8Head`: the lm_head, and a tied embedding, computed from that matrix by the engine's kernel outside the graph (kernel-head.ts), where this WebAssembly runs it. */
  kernelHead?: boolean;
  /** Where the head stays float32: hold a tied embedding and lm_head once, unpacked (tied-head.ts). */
  tiedHead?: boolean;
}

/** A graph larger than this is not given `num_logits_to_keep`: rewriting it would copy it whole. */
const MAX_GRAPH_REWRITE_BYTES = 64 << 20;

/** An external file of a session: a mount name and its bytes (or whatever onnxruntime was given). */
export interface MountedFile {
  path: string;
  data: Uint8Array;
}

/** What one session's rewrites add to the load's report (session-rewrites.ts `SessionRewriteReport`). */
export interface RewriteCounts {
  /** Bytes of weights moved to external data, or null where the graph was not externalized. */
  externalized: number | null;
  logitsToKeep: boolean;
  int8Projections: number;
  int8Head: Int8HeadReport;
  /** The graph's output and input the engine's kernel reads and feeds (kernel-head.ts); null where not taken. */
  kernelHead: { hidden: string; embeds: string | null; v: number; h: number } | null;
  tiedHead: number;
  fusedAttention: string[] | null;
  /** Values given a named shape in the graph's `value_info` (symbolic-shapes.ts). */
  shapes: number;
}

/** One session's rewritten model: made here (`rewriteSession`) or read back from storage (rewritten-graphs.ts). */
export interface SessionRewrite {
  graph: Uint8Array;
  /** Whether the model's own bytes are mounted as `INLINE_WEIGHTS` (its weights were externalized). */
  inline: boolean;
  /** The external files the rewrites made (int8 weights, int8 head, tied head), in mount order. */
  added: MountedFile[];
  /** The engine's lm_head kernel, its matrix written; null where the head stays in the graph. */
  kernel: Int8HeadKernel | null;
  counts: RewriteCounts;
}

/**
 * The rewrites of one model given as bytes (session-rewrites.ts says what each does and why):
 * externalized weights, `num_logits_to_keep`, then as `rewrites` asks the engine's head kernel
 * (only where `kernelAllowed`: one per load), the int8 head, the tied head, the int8 projections,
 * and last every value's shape named in the graph's `value_info` (symbolic-shapes.ts).
 * `given`: the external data the model came with, which the rewrites read weights from.
 */
export function rewriteSession(model: Uint8Array, given: readonly unknown[], rewrites: SessionRewriteOptions, kernelAllowed: boolean): SessionRewrite {
  const counts: RewriteCounts = {
    externalized: null,
    logitsToKeep: false,
    int8Projections: 0,
    int8Head: { embedding: false, lmHead: false, engineKernel: false, floatBytesDropped: 0, int8Bytes: 0 },
    kernelHead: null,
    tiedHead: 0,
    fusedAttention: null,
    shapes: 0,
  };
  const rewritten = externalizeWeights(model, INLINE_WEIGHTS);
  if (rewritten) counts.externalized = rewritten.movedBytes;
  const added: MountedFile[] = [];
  const mounts = (): unknown[] => [...given, ...(rewritten ? [{ path: INLINE_WEIGHTS, data: model }] : []), ...added];
  const mounted = (location: string) => mountedBytes(mounts(), location);
  let graph = rewritten ? rewritten.graph : model;
  const small = graph.byteLength <= MAX_GRAPH_REWRITE_BYTES;
  counts.fusedAttention = small ? fusedAttentionOps(graph) : null;
  const kept = small ? keepLogitsRows(graph) : null;
  if (kept) {
    counts.logitsToKeep = true;
    graph = kept;
  }
  // After the logits rows (these rewrites find the lm_head by its operator), the engine's kernel first.
  let kernel: Int8HeadKernel | null = null;
  const taken = small && rewrites.int8Head && rewrites.kernelHead && kernelAllowed ? kernelHead(graph, mounted, (v, h) => (kernel = Int8HeadKernel.create(v, h))) : null;
  if (taken && kernel) {
    counts.kernelHead = { hidden: taken.hidden, embeds: taken.embeds, v: taken.v, h: taken.h };
    counts.int8Head = { embedding: taken.embeds !== null, lmHead: true, engineKernel: true, floatBytesDropped: taken.droppedBytes, int8Bytes: taken.int8Bytes };
    graph = taken.graph;
  } else kernel = null;
  const head = small && rewrites.int8Head ? int8Head(graph, mounted) : null;
  if (head) {
    counts.int8Head.embedding ||= head.embedding;
    counts.int8Head.lmHead ||= head.head;
    counts.int8Head.floatBytesDropped += head.droppedBytes;
    counts.int8Head.int8Bytes += head.int8Bytes;
    graph = head.graph;
    added.push({ path: INT8_HEAD_WEIGHTS, data: head.weights });
  }
  const tied = small && !head && !taken && rewrites.tiedHead ? tiedHead(graph, mounted) : null;
  if (tied) {
    counts.tiedHead = tied.packedBytesAvoided;
    graph = tied.graph;
    added.push({ path: TIED_HEAD_WEIGHTS, data: tied.weights });
  }
  const int8 = small && rewrites.int8Projections ? int8Projections(graph, mounted) : null;
  if (int8) {
    counts.int8Projections = int8.projections;
    graph = int8.graph;
    added.push({ path: INT8_WEIGHTS, data: int8.weights });
  }
  // Last, over the graph as it will run: every value's shape named, so that onnxruntime plans its buffers in linear time.
  const shaped = small ? annotateShapes(graph, mounted) : null;
  if (shaped) {
    counts.shapes = shaped.annotated;
    graph = shaped.graph;
  }
  return { graph, inline: !!rewritten, added, kernel, counts };
}

/** The bytes of the external file mounted under `location`, if given as bytes. */
function mountedBytes(externalData: unknown[], location: string): Uint8Array | null {
  const file = externalData.find((f) => isFile(f) && f.path === location);
  return isFile(file) && file.data instanceof Uint8Array ? file.data : null;
}

export function isFile(file: unknown): file is { path: string; data: unknown } {
  return typeof file === 'object' && file !== null && 'data' in file;
}
