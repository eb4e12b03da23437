import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { withInt8Accuracy } from '../engine/graph/int8-accuracy.ts';
import { keepLogitsRows } from '../engine/graph/logits-to-keep.ts';
import { withNbitsHead } from '../engine/graph/nbits-head.ts';
import { readGraph, type ExternalData } from '../engine/graph/onnx-graph.ts';
import { withStepOutputs } from '../engine/graph/step-outputs.ts';
import { externalizeFile } from './externalize-file.ts';

interface SessionFactory {
  create(...args: unknown[]): Promise<unknown>;
}

/**
 * What the patched factory has done since it was installed: models rewritten, how many were
 * given `num_logits_to_keep`, their MatMulNBits nodes raised, and their heads made 8-bit.
 */
export interface NodeRewriteCount {
  models: number;
  logitsToKeep: number;
  /** Models given step outputs (engine/graph/step-outputs.ts). */
  stepOutputs: number;
  nodes: number;
  heads: number;
}

/** A q4 graph for onnxruntime-node's int8 kernels: its projections raised (int8-accuracy.ts), then its float32 head made an 8-bit MatMulNBits (nbits-head.ts; its weights read through `external` where they are external data). */
export function nodeQ4Rewrite(model: Uint8Array, external: ExternalData = () => null): { graph: Uint8Array; nodes: number; head: boolean } | null {
  const raised = withInt8Accuracy(model);
  if (!raised) return null;
  const head = withNbitsHead(raised.graph, external);
  return { graph: head?.graph ?? raised.graph, nodes: raised.nodes, head: head !== null };
}

/**
 * A model for onnxruntime-node's CPU provider: logits for the rows asked for only
 * (engine/graph/logits-to-keep.ts, as the page's sessions get them), each pass's new keys and
 * values as outputs of their own (engine/graph/step-outputs.ts: an extraction's rows are then
 * written in place instead of copied out whole at every step), then for a q4 graph its int8
 * projections and 8-bit head (`nodeQ4Rewrite`). Null where none applies.
 */
export function nodeRewrite(model: Uint8Array, external: ExternalData = () => null): { graph: Uint8Array; logitsToKeep: boolean; stepOutputs: boolean; nodes: number; head: boolean } | null {
  const kept = keepLogitsRows(model);
  const stepped = withStepOutputs(kept ?? model);
  const q4 = nodeQ4Rewrite(stepped ?? kept ?? model, external);
  if (!kept && !stepped && !q4) return null;
  return { graph: q4?.graph ?? stepped ?? kept!, logitsToKeep: kept !== null, stepOutputs: stepped !== null, nodes: q4?.nodes ?? 0, head: q4?.head ?? false };
}

/**
 * The largest model file read whole for a rewrite that reads weights (the q4 head); above it that
 * rewrite is not made. Every other rewrite reads the graph's own bytes only (externalize-file.ts).
 * Reading, rewriting and handing onnxruntime 540 MB as bytes (the 135M-shaped model's fp32 graph)
 * had taken its server from 3.5–3.9 s to 6.4–6.5 s to ready and 0.5 GB more at its peak, where
 * onnxruntime reads a path itself.
 */
export const MAX_INLINE_REWRITE_BYTES = 256 << 20;

/**
 * The engine's thread, in Node: every session onnxruntime-node creates from a model file (a path
 * or bytes, as transformers.js hands it) is created from `nodeRewrite`'s graph:
 *
 * - **logits for the rows read.** A hub export computes the lm_head for every position it is fed,
 *   where a pass reads one row (a decision's state, a chat's prompt, an extraction's fields): a
 *   fifth of a prefill's arithmetic on the 135M-shaped model, and room for a [tokens, vocabulary]
 *   float32 tensor in onnxruntime's arena. With `num_logits_to_keep` (LanguageModel feeds it) only
 *   the rows asked for are computed; those rows are the same numbers.
 * - **q4 on MLAS's int8 kernels:** 4-bit projections with 8-bit activations
 *   (engine/graph/int8-accuracy.ts) and a float32 lm_head as an 8-bit MatMulNBits
 *   (engine/graph/nbits-head.ts).
 *
 * A graph whose weights are in external data files beside it (`model.onnx_data`…) is small: it is
 * read and rewritten, and onnxruntime reads the weights from the model's folder as before
 * (`session.model_external_initializers_file_folder_path`). So is a file with inline weights: its
 * graph is read without them (externalize-file.ts), its weights named as external data of the file
 * itself, and onnxruntime reads them from it. Only for the q4 head's rewrite is the file read whole,
 * up to `maxInlineBytes` (default `MAX_INLINE_REWRITE_BYTES`), for the head's weights. A model with
 * nothing to rewrite is created from its path as exported. Installed once per thread,
 * before the engine loads (worker/engine.worker.node.ts).
 *
 * Not on `--device cuda` (null: nothing installed): the int8 activations are a choice for MLAS's
 * CPU kernels, and the CUDA provider's MatMulNBits dequantizes on the GPU whatever the level; an
 * 8-bit head there would only add its rounding. There the graph runs as exported, as measured on
 * the GPU (docs/server.md).
 */
export function installNodeRewrites(factory: SessionFactory, device: 'cpu' | 'cuda' = 'cpu', maxInlineBytes = MAX_INLINE_REWRITE_BYTES): NodeRewriteCount | null {
  if (device === 'cuda') return null;
  const count: NodeRewriteCount = { models: 0, logitsToKeep: 0, stepOutputs: 0, nodes: 0, heads: 0 };
  const original = factory.create.bind(factory);
  factory.create = async (model: unknown, ...rest: unknown[]) => {
    const [options, ...more] = rest;
    const given =
      typeof model === 'string'
        ? await readModelFile(model, maxInlineBytes)
        : model instanceof Uint8Array && !hasExternalDataOption(options) && model.byteLength <= maxInlineBytes
          ? { bytes: model, folder: null, external: () => null }
          : null;
    const rewritten = given ? nodeRewrite(given.bytes, given.external) : null;
    if (!rewritten) return original(model, ...rest);
    const session = await original(rewritten.graph, given!.folder === null ? options : withWeightsFolder(options, given!.folder), ...more);
    count.models++;
    if (rewritten.logitsToKeep) count.logitsToKeep++;
    if (rewritten.stepOutputs) count.stepOutputs++;
    count.nodes += rewritten.nodes;
    if (rewritten.head) count.heads++;
    return session;
  };
  return count;
}

/** Session options whose external data is read from `folder` (a graph given as bytes has no path to read it relative to). */
function withWeightsFolder(options: unknown, folder: string): Record<string, unknown> {
  const given = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  const extra = (given['extra'] ?? {}) as Record<string, unknown>;
  const session = (extra['session'] ?? {}) as Record<string, unknown>;
  return { ...given, extra: { ...extra, session: { ...session, model_external_initializers_file_folder_path: folder } } };
}

/**
 * A model file's graph to rewrite, the folder its external data is read from (null: its weights
 * are inline in it), and what the rewrites may read of that data; null where it cannot be read, so
 * that onnxruntime is handed the path and reports in its own words.
 */
async function readModelFile(path: string, maxInlineBytes: number): Promise<{ bytes: Uint8Array; folder: string | null; external: ExternalData } | null> {
  const none: ExternalData = () => null;
  try {
    if (await hasExternalData(path)) return { bytes: new Uint8Array(await readFile(path)), folder: dirname(path), external: none };
    const name = basename(path);
    const inline = (await stat(path)).size <= maxInlineBytes;
    // The graph alone (a few hundred KiB), read without the weights: the rewrites copy it, not them.
    const graph = await externalizeFile(path, name);
    if (!graph) return inline ? { bytes: new Uint8Array(await readFile(path)), folder: null, external: none } : null;
    // The q4 head's rewrite reads the head's weights: for it the file is read whole, up to the bound.
    const weights = inline && [...readGraph(graph)!.nodes.values()].some((n) => n.op === 'MatMulNBits') ? new Uint8Array(await readFile(path)) : null;
    return { bytes: graph, folder: dirname(path), external: (location) => (location === name ? weights : null) };
  } catch {
    // Unreadable here: onnxruntime's own error, as without the rewrites.
  }
  return null;
}

/** Whether a model file has external data beside it (`model.onnx_data`, `model.onnx_data_1`…: transformers.js' naming). */
async function hasExternalData(path: string): Promise<boolean> {
  const name = basename(path);
  try {
    return (await readdir(dirname(path))).some((f) => f.startsWith(`${name}_data`));
  } catch {
    return false;
  }
}

function hasExternalDataOption(options: unknown): boolean {
  return typeof options === 'object' && options !== null && Array.isArray((options as { externalData?: unknown }).externalData) && (options as { externalData: unknown[] }).externalData.length > 0;
}

/**
 * `load` run with the rewrites installed on `factory` (onnxruntime-node's `InferenceSession`), and
 * the factory as it was afterwards: an in-process engine whose sessions are created as the server's
 * thread creates them (the bench's Node rows, tests). What `load` creates meanwhile is rewritten.
 */
export async function withNodeRewrites<T>(factory: SessionFactory, load: () => Promise<T>): Promise<T> {
  const create = factory.create;
  installNodeRewrites(factory, 'cpu');
  try {
    return await load();
  } finally {
    factory.create = create;
  }
}
