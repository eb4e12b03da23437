import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { withInt8Accuracy } from '../engine/graph/int8-accuracy.ts';
import { withNbitsHead } from '../engine/graph/nbits-head.ts';

interface SessionFactory {
  create(...args: unknown[]): Promise<unknown>;
}

/** What the patched factory has done since it was installed: models rewritten, their MatMulNBits nodes raised, and their heads made 8-bit. */
export interface Int8AccuracyCount {
  models: number;
  nodes: number;
  heads: number;
}

/** A q4 graph for onnxruntime-node's int8 kernels: its projections raised (int8-accuracy.ts), then its float32 head made an 8-bit MatMulNBits (nbits-head.ts). */
export function nodeQ4Rewrite(model: Uint8Array): { graph: Uint8Array; nodes: number; head: boolean } | null {
  const raised = withInt8Accuracy(model);
  if (!raised) return null;
  const head = withNbitsHead(raised.graph);
  return { graph: head?.graph ?? raised.graph, nodes: raised.nodes, head: head !== null };
}

/**
 * The engine's thread, in Node: every session onnxruntime-node creates from a model file (a path
 * or bytes, as transformers.js hands it) gets its 4-bit projections computed with 8-bit
 * activations (engine/graph/int8-accuracy.ts) and a float32 lm_head as an 8-bit MatMulNBits
 * (engine/graph/nbits-head.ts), the file being read and rewritten first. A model
 * given with external data files beside it, or with no MatMulNBits to raise, is created as it was.
 * Installed once per thread, before the engine loads (worker/engine.worker.node.ts).
 *
 * Not on `--device cuda`: the int8 activations are a choice for MLAS's CPU kernels, and the CUDA
 * provider's MatMulNBits dequantizes on the GPU whatever the level; an 8-bit head there would only
 * add its rounding. The graph runs as exported (null: nothing installed).
 */
export function installInt8Accuracy(factory: SessionFactory, device: 'cpu' | 'cuda' = 'cpu'): Int8AccuracyCount | null {
  if (device === 'cuda') return null;
  const count: Int8AccuracyCount = { models: 0, nodes: 0, heads: 0 };
  const original = factory.create.bind(factory);
  factory.create = async (model: unknown, ...rest: unknown[]) => {
    // A path: its external data (relative to it) is read by onnxruntime from there; bytes would lose that.
    if (typeof model === 'string' && !(await hasExternalData(model))) {
      const rewritten = nodeQ4Rewrite(new Uint8Array(await readFile(model)));
      if (rewritten) return created(count, rewritten, () => original(rewritten.graph, ...rest));
    } else if (model instanceof Uint8Array && !hasExternalDataOption(rest[0])) {
      const rewritten = nodeQ4Rewrite(model);
      if (rewritten) return created(count, rewritten, () => original(rewritten.graph, ...rest));
    }
    return original(model, ...rest);
  };
  return count;
}

async function created(count: Int8AccuracyCount, rewritten: { nodes: number; head: boolean }, create: () => Promise<unknown>): Promise<unknown> {
  const session = await create();
  count.models++;
  count.nodes += rewritten.nodes;
  if (rewritten.head) count.heads++;
  return session;
}

/** Whether a model file has external data beside it (`model.onnx_data`, `model.onnx_data_1`…: transformers.js' naming). */
async function hasExternalData(path: string): Promise<boolean> {
  const name = basename(path);
  try {
    return (await readdir(dirname(path))).some((f) => f.startsWith(`${name}_data`));
  } catch {
    return true;
  }
}

function hasExternalDataOption(options: unknown): boolean {
  return typeof options === 'object' && options !== null && Array.isArray((options as { externalData?: unknown }).externalData) && (options as { externalData: unknown[] }).externalData.length > 0;
}
