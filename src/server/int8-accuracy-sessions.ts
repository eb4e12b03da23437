import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { withInt8Accuracy } from '../engine/graph/int8-accuracy.ts';

interface SessionFactory {
  create(...args: unknown[]): Promise<unknown>;
}

/** What the patched factory has done since it was installed: models rewritten, and their MatMulNBits nodes. */
export interface Int8AccuracyCount {
  models: number;
  nodes: number;
}

/**
 * The engine's thread, in Node: every session onnxruntime-node creates from a model file (a path
 * or bytes, as transformers.js hands it) gets its 4-bit projections computed with 8-bit
 * activations (engine/graph/int8-accuracy.ts), the file being read and rewritten first. A model
 * given with external data files beside it, or with no MatMulNBits to raise, is created as it was.
 * Installed once per thread, before the engine loads (worker/engine.worker.node.ts).
 */
export function installInt8Accuracy(factory: SessionFactory): Int8AccuracyCount {
  const count: Int8AccuracyCount = { models: 0, nodes: 0 };
  const original = factory.create.bind(factory);
  factory.create = async (model: unknown, ...rest: unknown[]) => {
    // A path: its external data (relative to it) is read by onnxruntime from there; bytes would lose that.
    if (typeof model === 'string' && !(await hasExternalData(model))) {
      const rewritten = withInt8Accuracy(new Uint8Array(await readFile(model)));
      if (rewritten) return created(count, rewritten, () => original(rewritten.graph, ...rest));
    } else if (model instanceof Uint8Array && !hasExternalDataOption(rest[0])) {
      const rewritten = withInt8Accuracy(model);
      if (rewritten) return created(count, rewritten, () => original(rewritten.graph, ...rest));
    }
    return original(model, ...rest);
  };
  return count;
}

async function created(count: Int8AccuracyCount, rewritten: { nodes: number }, create: () => Promise<unknown>): Promise<unknown> {
  const session = await create();
  count.models++;
  count.nodes += rewritten.nodes;
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
