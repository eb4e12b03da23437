import { CollectionWitness, promptCollection } from './collection-prompt.ts';
import { externalizeWeights } from '../graph/externalize-weights.ts';
import { fusedAttentionOps } from '../graph/fused-attention.ts';
import { INT8_HEAD_WEIGHTS, int8Head } from '../graph/int8-head.ts';
import { kernelHead } from '../graph/kernel-head.ts';
import { Int8HeadKernel, type KernelHead } from '../runtime/int8-head-kernel.ts';
import { INT8_WEIGHTS, int8Projections } from '../graph/int8-projections.ts';
import { TIED_HEAD_WEIGHTS, tiedHead } from '../graph/tied-head.ts';
import type { Device, Dtype, LanguageModel } from '../model/language-model.ts';
import { keepLogitsRows } from '../graph/logits-to-keep.ts';
import { type ModelHandoff, withHandoff } from './model-handoff.ts';
import { releaseView } from './release-buffer.ts';
import type { EngineStatus } from '../../protocol/engine-api.ts';
import type { LoadTimer } from './load-timing.ts';

/**
 * The name under which a model's own file is mounted as the external data of its externalized
 * graph (externalize-weights.ts). Not a file anywhere: a key of onnxruntime-web's mount table.
 */
export const INLINE_WEIGHTS = 'jev-inline-weights';

/** What a load did to its sessions: how many had their weights externalized (and their bytes), how many were given `num_logits_to_keep`. */
export interface SessionRewriteReport {
  sessions: number;
  bytes: number;
  logitsToKeep: number;
  /** 4-bit projections rewritten to 8-bit integer products (int8-projections.ts; wasm only). */
  int8Projections: number;
  /** The embedding Gather and lm_head product rewritten to read one int8 matrix (int8-head.ts), and the float bytes that left the graph for the int8 bytes that replaced them. */
  int8Head: Int8HeadReport;
  /** The lm_head (and a tied embedding) taken out of the graph for the engine's kernel (kernel-head.ts): what the model's passes compute them with; null where onnxruntime does. */
  kernelHead: KernelHead | null;
  /** Bytes of the packed lm_head copy onnxruntime no longer makes, the tied float32 matrix being held once (tied-head.ts); 0 where not rewritten. */
  tiedHead: number;
  /** Bytes of model files (and of the int8 weights made from them) released as soon as their session existed (release-buffer.ts). */
  released: number;
  /** In a browser: whether the released buffers' objects were seen collected after the load (collection-prompt.ts); null where not prompted. */
  collected: boolean | null;
  /** The fused attention operators the sessions' graphs use (fused-attention.ts), or null where a graph was not read (too big, not given as bytes, or not parsed): the WebGPU long-pass check then runs. */
  fusedAttention: string[] | null;
}

/** `EngineStatus.int8Head`: which readers were rewritten, whether the engine's own kernel computes them (int8-head-kernel.ts), and the bytes. */
export type Int8HeadReport = NonNullable<EngineStatus['int8Head']>;

interface SessionFactory {
  create(...args: unknown[]): Promise<unknown>;
}

interface SessionOptions {
  externalData?: unknown[];
  [option: string]: unknown;
}

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

/**
 * The rewrites a load on `device` makes: 4-bit projections as 8-bit integer products on wasm only
 * (WebGPU has a 4-bit kernel); the embedding and lm_head at 8 bits on wasm for every format but
 * fp32, and for fp32 too where the caller asked (`quantizeHead: true`), a float32 head computed by
 * the engine's kernel (`kernelHead`); `quantizeHead: false` keeps them in floating point for every
 * format (more memory, and no faster since the kernel: docs/models.md).
 * Where the head stays in floating point on wasm, a tied float32 one is held once, not packed a
 * second time (tied-head.ts). Not on WebGPU (not tried there):
 * the rewrite is made for onnxruntime's CPU integer kernels (docs/models.md).
 */
export function rewritesOn(device: Device, dtype?: Dtype, quantizeHead?: boolean): SessionRewriteOptions {
  const wasm = device === 'wasm';
  const int8Head = wasm && dtype !== undefined && (quantizeHead ?? dtype !== 'fp32');
  return { int8Projections: wasm, int8Head, kernelHead: int8Head, tiedHead: wasm && !int8Head };
}

/** Gives `lm` what its load's rewrites made: the counts `status()` reports, and the kernel its passes compute the lm_head with, if any. */
export function attachRewrites(lm: LanguageModel, report: SessionRewriteReport): void {
  lm.int8Projections = report.int8Projections;
  lm.int8Head = report.int8Head;
  lm.kernelHead = report.kernelHead;
  lm.tiedHead = report.tiedHead;
}

/** A graph larger than this is not given `num_logits_to_keep`: rewriting it would copy it whole. */
const MAX_GRAPH_REWRITE_BYTES = 64 << 20;

/**
 * Runs `load` (transformers.js' `from_pretrained`) with onnxruntime-web's `InferenceSession.create`
 * rewriting each model given as bytes, before the session is made:
 *
 * - inline weights become external data read straight from those bytes, so each weight is copied
 *   into wasm memory once, not twice (externalize-weights.ts says why);
 * - a graph without `num_logits_to_keep` gets it, so a pass computes the logits of the rows the
 *   engine reads only (logits-to-keep.ts);
 * - with `int8Projections`, its 4-bit projections become 8-bit integer products
 *   (int8-projections.ts), whose weights are a new buffer mounted beside the others;
 * - with `kernelHead` (and `int8Head`), a float32 lm_head and the embedding tied to it leave the
 *   graph: the model's passes compute them from one int8 matrix in the engine's kernel
 *   (kernel-head.ts, int8-head-kernel.ts), which runs the 8-bit product in about a third of
 *   onnxruntime-web's MatMulInteger time at one row (docs/memory.md, "The trade-off removed");
 * - with `int8Head`, its embedding Gather and lm_head product (those still in the graph) read one
 *   int8 matrix (int8-head.ts), mounted the same way; the float matrix leaves the graph;
 * - with `tiedHead` (and no int8 head), a tied float32 embedding and lm_head read one transposed
 *   matrix that onnxruntime does not pack a second copy of (tied-head.ts), mounted the same way.
 *
 * The factory is restored when `load` settles.
 * A model already in external-data form is created as it was. Either way, once the session exists
 * the bytes it was made from are released (release-buffer.ts). A model given any other way (a URL,
 * an offset into a buffer) is left to onnxruntime.
 */
export async function withSessionRewrites<T>(
  factory: SessionFactory,
  load: () => Promise<T>,
  handoff: ModelHandoff | null = null,
  rewrites: SessionRewriteOptions = {},
  /** The load's timing: each session's rewrites and its creation by onnxruntime, as `rewrites` and `session`. */
  timer: LoadTimer | null = null,
): Promise<{ value: T; report: SessionRewriteReport }> {
  const original = factory.create;
  const report: SessionRewriteReport = { sessions: 0, bytes: 0, logitsToKeep: 0, int8Projections: 0, int8Head: { embedding: false, lmHead: false, engineKernel: false, floatBytesDropped: 0, int8Bytes: 0 }, kernelHead: null, tiedHead: 0, released: 0, collected: null, fusedAttention: [] };
  // Released buffers that a browser API has seen go at a collection only (collection-prompt.ts).
  const witness = new CollectionWitness();
  /** The bytes a buffer transformers.js read stands for: the deposited file its ticket names, or itself. */
  const resolve = <D>(data: D): D => ((data instanceof Uint8Array && handoff?.claim(data)) || data) as D;
  factory.create = function (this: unknown, ...args: unknown[]) {
    const [read, options] = args as [unknown, SessionOptions | undefined];
    if (!(read instanceof Uint8Array) || args.length > 2) {
      report.fusedAttention = null; // a graph this does not read
      const endSession = timer?.begin('session');
      const created = original.apply(this, args);
      return endSession ? created.finally(endSession) : created;
    }
    const endRewrites = timer?.begin('rewrites');
    // What transformers.js read may be a ticket: the bytes are then the file the fetch deposited (model-handoff.ts).
    const readData = (options?.externalData ?? []).map((file) => (isFile(file) ? file.data : null));
    const model = resolve(read);
    const given = (options?.externalData ?? []).map((file) => (isFile(file) ? { ...file, data: resolve(file.data) } : file));
    const rewritten = externalizeWeights(model, INLINE_WEIGHTS);
    if (rewritten) {
      report.sessions++;
      report.bytes += rewritten.movedBytes;
    }
    const externalData = rewritten ? [...given, { path: INLINE_WEIGHTS, data: model }] : given;
    let graph = rewritten ? rewritten.graph : model;
    const small = graph.byteLength <= MAX_GRAPH_REWRITE_BYTES;
    const fused = small ? fusedAttentionOps(graph) : null;
    report.fusedAttention = fused && report.fusedAttention ? [...new Set([...report.fusedAttention, ...fused])] : null;
    const kept = small ? keepLogitsRows(graph) : null;
    if (kept) {
      report.logitsToKeep++;
      graph = kept;
    }
    // After the logits rows (these rewrites find the lm_head by its operator), the engine's kernel first.
    let kernel: Int8HeadKernel | null = null;
    const taken =
      small && rewrites.int8Head && rewrites.kernelHead && !report.kernelHead
        ? kernelHead(
            graph,
            (location) => mounted(externalData, location),
            (v, h) => (kernel = Int8HeadKernel.create(v, h)),
          )
        : null;
    if (taken && kernel) {
      report.kernelHead = { kernel, hidden: taken.hidden, embeds: taken.embeds };
      report.int8Head.embedding ||= taken.embeds !== null;
      report.int8Head.lmHead = true;
      report.int8Head.engineKernel = true;
      report.int8Head.floatBytesDropped += taken.droppedBytes;
      report.int8Head.int8Bytes += taken.int8Bytes;
      graph = taken.graph;
    }
    const head = small && rewrites.int8Head ? int8Head(graph, (location) => mounted(externalData, location)) : null;
    if (head) {
      report.int8Head.embedding ||= head.embedding;
      report.int8Head.lmHead ||= head.head;
      report.int8Head.floatBytesDropped += head.droppedBytes;
      report.int8Head.int8Bytes += head.int8Bytes;
      graph = head.graph;
      externalData.push({ path: INT8_HEAD_WEIGHTS, data: head.weights });
    }
    const tied = small && !head && !taken && rewrites.tiedHead ? tiedHead(graph, (location) => mounted(externalData, location)) : null;
    if (tied) {
      report.tiedHead += tied.packedBytesAvoided;
      graph = tied.graph;
      externalData.push({ path: TIED_HEAD_WEIGHTS, data: tied.weights });
    }
    const int8 = small && rewrites.int8Projections ? int8Projections(graph, (location) => mounted(externalData, location)) : null;
    if (int8) {
      report.int8Projections += int8.projections;
      graph = int8.graph;
      externalData.push({ path: INT8_WEIGHTS, data: int8.weights });
    }
    endRewrites?.();
    const endSession = timer?.begin('session');
    const created = original.call(this, graph, options?.externalData || rewritten || int8 || head || tied ? { ...options, externalData } : options);
    if (endSession) void created.then(endSession, endSession);
    return created.then((session) => {
      // The session holds its own copy of every weight now: the files' bytes can go.
      const files = new Set([model, ...externalData.map((file) => (isFile(file) ? file.data : null))]);
      for (const data of files) {
        if (!(data instanceof Uint8Array)) continue;
        // Its memory goes when its object does (a browser API may have wrapped it): watched until then.
        if (data.buffer.byteLength > 0) witness.watch(data.buffer);
        report.released += handoff?.release(data) || releaseView(data);
      }
      // And the buffers transformers.js read tickets into (mostly never-touched pages): not counted.
      for (const data of [read, ...readData]) if (data instanceof Uint8Array && !files.has(data)) releaseView(data);
      return session;
    });
  };
  try {
    const value = await (handoff ? withHandoff(handoff, load) : load());
    if (report.released > 0 && ('WorkerGlobalScope' in globalThis || 'document' in globalThis)) report.collected = await promptCollection(witness);
    return { value, report };
  } finally {
    factory.create = original;
  }
}

/** The bytes of the external file mounted under `location`, if given as bytes. */
function mounted(externalData: unknown[], location: string): Uint8Array | null {
  const file = externalData.find((f) => isFile(f) && f.path === location);
  return isFile(file) && file.data instanceof Uint8Array ? file.data : null;
}

function isFile(file: unknown): file is { path: string; data: unknown } {
  return typeof file === 'object' && file !== null && 'data' in file;
}

