import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { env } from '@huggingface/transformers';
import { JevError } from '../contract/index.ts';
import { Engine } from '../engine/engine.ts';
import { externalDataFiles } from '../engine/load/external-data.ts';
import type { ServeDevice } from './cli-args.ts';
import { folderHasModel } from './model-location.ts';

export interface EmbeddedEngineOptions {
  model: string;
  /** A folder in the hub layout: `--host DIR`, `file://…`, the bundled copy, or an HTTP host's files made local (model-download.ts). */
  root: string;
  /** What `--host` said, for messages. */
  host: string;
  device: ServeDevice;
  /** The prefix cache's byte budget (default: the engine's). */
  prefixCacheBytes?: number;
}

/**
 * The page's engine (engine/engine.ts) in this process, on onnxruntime-node: the same loading,
 * decision scoring, chat, grammar, prefix cache and request queue; only the runtime differs
 * (onnxruntime-node's CPU execution provider, on every core, where the page runs
 * onnxruntime-web). It reads the model from a folder in the hub layout, in place; an HTTP(S)
 * host's files are first made such a folder by model-download.ts (checked, stored, resumed).
 */
export async function embeddedEngine(options: EmbeddedEngineOptions): Promise<Engine> {
  const prefix = options.prefixCacheBytes === undefined ? {} : { prefixCacheBytes: options.prefixCacheBytes };
  // Nothing written beside the package (transformers.js' own file cache): the engine's store is the one cache.
  env.useFSCache = false;
  const { root, model } = options;
  if (!folderHasModel(root, model)) {
    throw new JevError('model_load_failed', `The model ${model} is not in ${root}: no ${join(root, model, 'config.json')}. --host names a folder in the hub layout ({folder}/{model}/config.json, {folder}/{model}/onnx/…).`, {
      param: 'model',
      details: { reason: 'model_not_found', model, host: options.host },
    });
  }
  return new Engine({
    ...prefix,
    runtime: { localModelPath: root },
    isNode: true,
    source: () => ({ has: async (file) => folderOffers(root, model, file) }),
  });
}

/** Whether a folder holds `onnx/<file>` and every external data file its config.json declares for it. */
function folderOffers(root: string, model: string, file: string): boolean {
  const dir = join(root, model);
  if (!existsSync(join(dir, 'onnx', file))) return false;
  let config: unknown = null;
  try {
    config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as unknown;
  } catch {
    return true;
  }
  return externalDataFiles(config, `onnx/${file}`).every((f) => existsSync(join(dir, f)));
}

/**
 * `--device cuda`: onnxruntime-node's CUDA execution provider where this install has it. The
 * engine's loader passes onnxruntime-node the CPU provider only (engine/load/load-model.ts), so
 * the server refuses, naming what this install offers, rather than serve on the CPU unasked.
 */
export async function refuseCuda(): Promise<never> {
  let offered: string;
  try {
    const ort = (await import('onnxruntime-node')) as { listSupportedBackends?: () => { name: string; bundled: boolean }[] };
    const backends = ort.listSupportedBackends?.() ?? [];
    const cuda = backends.find((b) => b.name === 'cuda');
    offered = cuda
      ? cuda.bundled
        ? 'this onnxruntime-node bundles the CUDA provider, but jev-local does not pass it to the model yet'
        : "this onnxruntime-node has no CUDA provider installed (it is not bundled: install it with onnxruntime-node's CUDA option, see its README)"
      : 'this onnxruntime-node offers no CUDA provider';
  } catch (e) {
    offered = `onnxruntime-node could not be loaded (${(e as Error).message})`;
  }
  throw new JevError('model_load_failed', `--device cuda is not available: ${offered}. Use --device cpu.`, { param: 'device', details: { reason: 'device_unavailable', device: 'cuda' } });
}
