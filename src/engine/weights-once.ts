import { externalizeWeights } from './externalize-weights.ts';
import { releaseView } from './release-buffer.ts';

/**
 * The name under which a model's own file is mounted as the external data of its externalized
 * graph (externalize-weights.ts). Not a file anywhere: a key of onnxruntime-web's mount table.
 */
export const INLINE_WEIGHTS = 'jev-inline-weights';

/** What a load did to its sessions' weights: how many sessions were rewritten, and their weight bytes. */
export interface WeightsOnceReport {
  sessions: number;
  bytes: number;
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

/**
 * Runs `load` (transformers.js' `from_pretrained`) with onnxruntime-web's `InferenceSession.create`
 * rewriting each model given as bytes with inline weights into a graph that reads them, as
 * external data, straight from those bytes: the weights are then copied into wasm memory once,
 * not twice (externalize-weights.ts says why). The factory is restored when `load` settles.
 * A model already in external-data form is created as it was. Either way, once the session exists
 * the bytes it was made from are released (release-buffer.ts). A model given any other way (a URL,
 * an offset into a buffer) is left to onnxruntime.
 */
export async function withWeightsOnce<T>(factory: SessionFactory, load: () => Promise<T>): Promise<{ value: T; report: WeightsOnceReport }> {
  const original = factory.create;
  const report: WeightsOnceReport = { sessions: 0, bytes: 0, released: 0 };
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
    const created = original.call(this, rewritten ? rewritten.graph : model, rewritten ? { ...options, externalData } : options);
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

