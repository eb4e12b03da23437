/**
 * onnxruntime-web itself (the bundle the app ships, wasm, one thread) in Node, for tests that run
 * the sessions the engine's load rewrites make, and the logits of a prompt from an empty cache.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

export interface OrtSession {
  inputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: Float32Array | Uint16Array; dispose(): void }>>;
  release(): Promise<void>;
}

export interface OrtWeb {
  InferenceSession: { create(...args: unknown[]): Promise<OrtSession> };
  Tensor: new (type: string, data: unknown, dims: number[]) => unknown;
  env: { wasm: { numThreads: number; wasmPaths: string } };
}

export async function loadOrtWeb(): Promise<OrtWeb> {
  const ort = (await import('onnxruntime-web/webgpu')) as unknown as OrtWeb;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = `${dirname(createRequire(import.meta.url).resolve('onnxruntime-web'))}/`;
  return ort;
}

/** The logits of every position of `ids` from an empty cache (a model of `kvHeads` × `headDim` KV). */
export async function promptLogits(ort: OrtWeb, session: OrtSession, ids: number[], kv: { kvHeads: number; headDim: number }, float16: boolean): Promise<number[]> {
  return Array.from(await promptLogitsData(ort, session, ids, kv, float16));
}

/**
 * `promptLogits` as a copy of the output's typed array (float32 values, or float16 bit patterns):
 * for large vocabularies, where a number[] of every row costs more than the pass.
 */
export async function promptLogitsData(ort: OrtWeb, session: OrtSession, ids: number[], kv: { kvHeads: number; headDim: number }, float16: boolean): Promise<Float32Array | Uint16Array> {
  const feeds: Record<string, unknown> = {};
  for (const name of session.inputNames) {
    if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map(() => 1n)), [1, ids.length]);
    else if (name === 'position_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map((_, i) => BigInt(i))), [1, ids.length]);
    else if (name === 'num_logits_to_keep') feeds[name] = new ort.Tensor('int64', BigInt64Array.from([0n]), []);
    else feeds[name] = new ort.Tensor(float16 ? 'float16' : 'float32', float16 ? new Uint16Array(0) : new Float32Array(0), [1, kv.kvHeads, 0, kv.headDim]);
  }
  const out = await session.run(feeds);
  const values = out['logits']!.data.slice();
  for (const t of Object.values(out)) t.dispose();
  return values;
}
