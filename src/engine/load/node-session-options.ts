/** What the engine sets of onnxruntime-node's session options (load-model.ts, through runtime-env.ts). */
export interface NodeSessionOptions {
  intraOpNumThreads?: number;
  executionProviders?: string[];
  extra?: { session: { intra_op: { allow_spinning: '0' } } };
}

/**
 * onnxruntime-node's session options for `threads` compute threads (null: its default, every
 * core) on `provider`. On the CPU provider its intra-op threads do not spin once their share of
 * an operator is done: they sleep until the next. Spinning keeps a core busy between operators
 * and between passes, where the engine's thread works and V8 collects the cache's outputs (the
 * engine's heap makes that collection costly: docs/benchmarks.md, `serve`); served decode at 2
 * threads went from 28–32 to 32–36 tok/s at q8 and from 37–39 to 41–46 at q4 (3 and 2
 * alternated pairs of runs, two measurements each), prefill and decisions unchanged
 * (2026-12-05). At 1 thread there is no pool to spin.
 */
export function nodeSessionOptionsFor(threads: number | null, provider: 'cpu' | 'cuda'): NodeSessionOptions {
  const count = threads ? { intraOpNumThreads: threads } : {};
  if (provider === 'cuda') return { ...count, executionProviders: ['cuda', 'cpu'] };
  return { ...count, extra: { session: { intra_op: { allow_spinning: '0' } } } };
}
