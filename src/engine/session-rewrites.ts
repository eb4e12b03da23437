import { externalizeWeights } from './externalize-weights.ts';
import { keepLogitsRows } from './logits-to-keep.ts';
import { releaseView } from './release-buffer.ts';

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
  /** Bytes of model files released as soon as their session existed (release-buffer.ts). */
  released: number;
}

interface SessionFactory {
  create(...args: unknown[]): Promise<unknown>;
}

interface SessionOptions {
  externalData?: unknown[];
  [option: string]: unknown;
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
 *   engine reads only (logits-to-keep.ts).
 *
 * The factory is restored when `load` settles.
 * A model already in external-data form is created as it was. Either way, once the session exists
 * the bytes it was made from are released (release-buffer.ts). A model given any other way (a URL,
 * an offset into a buffer) is left to onnxruntime.
 */
export async function withSessionRewrites<T>(factory: SessionFactory, load: () => Promise<T>): Promise<{ value: T; report: SessionRewriteReport }> {
  const original = factory.create;
  const report: SessionRewriteReport = { sessions: 0, bytes: 0, logitsToKeep: 0, released: 0 };
  factory.create = function (this: unknown, ...args: unknown[]) {
    const [model, options] = args as [unknown, SessionOptions | undefined];
    if (!(model instanceof Uint8Array) || args.length > 2) return original.apply(this, args);
    const rewritten = externalizeWeights(model, INLINE_WEIGHTS);
    if (rewritten) {
      report.sessions++;
      report.bytes += rewritten.movedBytes;
    }
    const given = options?.externalData ?? [];
    const externalData = rewritten ? [...given, { path: INLINE_WEIGHTS, data: model }] : given;
    let graph = rewritten ? rewritten.graph : model;
    const kept = graph.byteLength <= MAX_GRAPH_REWRITE_BYTES ? keepLogitsRows(graph) : null;
    if (kept) {
      report.logitsToKeep++;
      graph = kept;
    }
    const created = original.call(this, graph, rewritten ? { ...options, externalData } : options);
    return created.then((session) => {
      // The session holds its own copy of every weight now: the files' bytes can go.
      report.released += releaseView(model);
      for (const file of externalData) {
        const data = (file as { data?: unknown } | null)?.data;
        if (data instanceof Uint8Array) report.released += releaseView(data);
      }
      return session;
    });
  };
  try {
    return { value: await load(), report };
  } finally {
    factory.create = original;
  }
}

