/**
 * `npm run bench -- --only serve`, the bare-session rows beside the embedded ones
 * (embedded-serve-rows.ts): onnxruntime-node alone, in a process of its own
 * (bare-session-process.ts) with no engine, no server and no tokenizer, on the graph `jev-local
 * serve` creates (src/server/node-session-rewrites.ts: logits for the rows read, step outputs, and
 * q4's int8 projections and 8-bit head; a file above the inline bound, as the 540 MB fp32 one, as
 * its graph alone, its weights read from the file), with the same threads and options
 * (src/engine/load/node-session-options.ts).
 * Prefill: one pass over as many ids as the served prompt has; decode: DECODE_TOKENS passes of one
 * id, each feeding the cache the one before returned. So the row is the most the embedded engine
 * could decode and prefill on this runtime: where the embedded row misses llama.cpp's, this one
 * says how much of the miss is onnxruntime's own step and how much is the engine's.
 *
 * Its own process, because a step's cost depends on the JavaScript heap around it: each step's
 * `present` outputs are new buffers of the whole cache (18 MiB at q8 after 406 positions), whose
 * memory V8 returns only by collecting, and it starts a full collection about every 64 MiB of
 * them; a full collection marks the whole heap. Stepped inside the bench's process (the servers,
 * llama.cpp and the results of the rows before it), the same loop decoded q8 at 2 threads at 29
 * tok/s; alone, 44–50 (2026-12-05, onnxruntime's threads spinning then).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { nodeSessionOptionsFor } from '../../src/engine/load/node-session-options.ts';
import { installNodeRewrites } from '../../src/server/node-session-rewrites.ts';
import { round } from './measure.ts';
import { median } from './schema.ts';
import { DECODE_TOKENS } from './served-timing.ts';

const FILE = { fp32: 'model.onnx', q8: 'model_quantized.onnx', q4: 'model_q4.onnx' } as const;
export type BareDtype = keyof typeof FILE;

/** What bare-session-process.ts is started with (its one argument, as JSON). */
export interface BareSessionJob {
  root: string;
  model: string;
  dtype: BareDtype;
  threads: number;
  reps: number;
  promptTokens: number;
}

export interface BareSessionTimes {
  prefill_tokens: number;
  prefill_tok_s: number;
  decode_tokens: number;
  decode_tok_s: number;
}

/**
 * `promptTokens`: the prompt's length, the served row's (`prefill_tokens`), so that both decode
 * over a cache of the same length: each step reads the whole cache and the graph copies it into
 * its `present` outputs, so a step's cost grows with it (at q8, 2 threads, spinning: ~14 ms a
 * token after 160 positions, ~21 ms after 406, 2026-12-05).
 */
export async function stepBareSession(root: string, model: string, dtype: BareDtype, threads: number, reps: number, promptTokens: number): Promise<BareSessionTimes> {
  const path = join(root, model, 'onnx', FILE[dtype]);
  // The options the served engine's session gets (runtime-env.ts), its threads not spinning between operators.
  const options: ort.InferenceSession.SessionOptions = { ...nodeSessionOptionsFor(threads, 'cpu'), interOpNumThreads: 1, graphOptimizationLevel: 'all' };
  // Created as the server's thread creates it: through its rewrites (node-session-rewrites.ts).
  const factory = { create: (model: unknown, opts: unknown) => ort.InferenceSession.create(model as string, opts as ort.InferenceSession.SessionOptions) as Promise<unknown> };
  installNodeRewrites(factory, 'cpu');
  const session = (await factory.create(path, options)) as ort.InferenceSession;
  try {
    const kv = session.inputNames.filter((n) => n.startsWith('past_key_values'));
    const meta = new Map((session.inputMetadata as unknown as readonly { name: string; shape?: readonly (number | string)[] }[]).map((m) => [m.name, m.shape ?? []]));
    const dims = (name: string) => meta.get(name)!.map((d) => (typeof d === 'number' ? d : 0));
    const pass = async (ids: number[], past: Record<string, ort.Tensor>, at: number) => {
      const total = at + ids.length;
      const feeds: Record<string, ort.Tensor> = {
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, (i) => BigInt(i)), [1, ids.length]),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
        ...past,
      };
      if (session.inputNames.includes('position_ids')) feeds['position_ids'] = new ort.Tensor('int64', BigInt64Array.from(ids, (_, i) => BigInt(at + i)), [1, ids.length]);
      if (session.inputNames.includes('num_logits_to_keep')) feeds['num_logits_to_keep'] = new ort.Tensor('int64', [1n], []);
      const out = await session.run(feeds);
      const next: Record<string, ort.Tensor> = {};
      for (const name of kv) next[name] = out[name.replace('past_key_values', 'present')]!;
      return next;
    };
    const empty = () => Object.fromEntries(kv.map((name) => [name, new ort.Tensor('float32', new Float32Array(0), dims(name).map((d, i) => (i === 0 ? 1 : d)))]));
    const prefill: number[] = [];
    const decode: number[] = [];
    for (let rep = -1; rep < reps; rep++) {
      const ids = Array.from({ length: promptTokens }, (_, i) => 100 + (((i + rep + 1) * 7919) % 5000));
      let t = performance.now();
      let past = await pass(ids, empty(), 0);
      const prefillMs = performance.now() - t;
      t = performance.now();
      for (let k = 0; k < DECODE_TOKENS; k++) past = await pass([100 + ((k * 31) % 5000)], past, promptTokens + k);
      const decodeMs = performance.now() - t;
      if (rep < 0) continue; // warm-up
      prefill.push(promptTokens / (prefillMs / 1000));
      decode.push(DECODE_TOKENS / (decodeMs / 1000));
    }
    return { prefill_tokens: promptTokens, prefill_tok_s: round(median(prefill), 1), decode_tokens: DECODE_TOKENS, decode_tok_s: round(median(decode), 1) };
  } finally {
    await session.release();
  }
}

/** `stepBareSession` in a new Node process (bare-session-process.ts, through tsx, as the bench runs): its times, or its error. */
export function measureBareSession(job: BareSessionJob): Promise<BareSessionTimes> {
  const entry = fileURLToPath(new URL('./bare-session-process.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', entry, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as BareSessionTimes);
      else reject(new Error(`the bare session's process exited with ${code}: ${err.trim().split('\n').slice(-5).join(' | ')}`));
    });
  });
}
