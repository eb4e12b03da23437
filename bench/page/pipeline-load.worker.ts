/**
 * The worker of bench/page/pipeline-load.ts: `pipeline('text-generation', model, { dtype, device: 'wasm' })`
 * as transformers.js' documentation has an app make it, with its defaults but where this machine
 * needs otherwise: the models from the bench's mirror (no hub), and onnxruntime-web's runtime from
 * the page's own `ort/` (the same files the engine loads, not a CDN). Its model files go through
 * transformers.js' browser cache (the Cache API), which is what a return visit reads.
 */
import { env, pipeline } from '@huggingface/transformers';
import { ortWasmPaths, resolveOrtBuild } from '../../src/engine/runtime/ort-build.ts';

export interface PipelineRequest {
  model: string;
  host: string;
  dtype: string;
  threads: number;
  ortBase: string;
  state: string;
}

export type PipelineReply = { kind: 'ready' } | { kind: 'answered'; threads: number } | { kind: 'error'; message: string };

self.onmessage = async ({ data }: MessageEvent<PipelineRequest>) => {
  const reply = (m: PipelineReply) => self.postMessage(m);
  try {
    env.allowLocalModels = false;
    env.remoteHost = data.host.endsWith('/') ? data.host : `${data.host}/`;
    env.remotePathTemplate = '{model}/resolve/{revision}/';
    const wasm = env.backends.onnx!.wasm!;
    wasm.wasmPaths = ortWasmPaths(data.ortBase, resolveOrtBuild('auto', 'wasm')); // the build the engine's wasm load runs
    wasm.numThreads = data.threads;
    const generator = await pipeline('text-generation', data.model, { dtype: data.dtype as 'fp32', device: 'wasm' });
    reply({ kind: 'ready' });
    await generator(data.state, { max_new_tokens: 1, do_sample: false });
    reply({ kind: 'answered', threads: data.threads });
  } catch (e) {
    reply({ kind: 'error', message: e instanceof Error ? e.message : String(e) });
  }
};
