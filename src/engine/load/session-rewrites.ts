import { CollectionWitness, promptCollection } from './collection-prompt.ts';
import type { KernelHead } from '../runtime/int8-head-kernel.ts';
import type { Device, Dtype, LanguageModel } from '../model/language-model.ts';
import { type ModelHandoff, withHandoff } from './model-handoff.ts';
import { releaseView } from './release-buffer.ts';
import { closePart, PartOnDisk } from './storage/part-on-disk.ts';
import { INLINE_WEIGHTS, isFile, rewriteSession, type Int8HeadReport, type SessionRewrite, type SessionRewriteOptions } from './rewrite-session.ts';
import { withoutShapes } from '../graph/symbolic-shapes.ts';
import type { RewrittenGraphs } from './rewritten-graphs.ts';
import type { LoadTimer } from './load-timing.ts';

export { INLINE_WEIGHTS };
export type { Int8HeadReport, SessionRewriteOptions };

/** What a load did to its sessions: how many had their weights externalized (and their bytes), how many were given `num_logits_to_keep`. */
export interface SessionRewriteReport {
  sessions: number;
  bytes: number;
  logitsToKeep: number;
  /** 4-bit projections rewritten to 8-bit integer products (int8-projections.ts; wasm only). */
  int8Projections: number;
  /** The embedding Gather and lm_head product rewritten to read one int8 matrix (int8-head.ts), and the float bytes that left the graph for the int8 bytes that replaced them. */
  int8Head: Int8HeadReport;
  /** The lm_head (and a tied embedding) taken out of the graph for the engine's kernel (kernel-head.ts): what the model's passes compute them with; null where onnxruntime does. */
  kernelHead: KernelHead | null;
  /** Bytes of the packed lm_head copy onnxruntime no longer makes, the tied float32 matrix being held once (tied-head.ts); 0 where not rewritten. */
  tiedHead: number;
  /** Bytes of model files (and of the int8 weights made from them) released as soon as their session existed (release-buffer.ts). */
  released: number;
  /** In a browser: whether the released buffers' objects were seen collected after the load (collection-prompt.ts); null where not prompted, and until the prompt (`collecting`) ends. */
  collected: boolean | null;
  /** The fused attention operators the sessions' graphs use (fused-attention.ts), or null where a graph was not read (too big, not given as bytes, or not parsed): the WebGPU long-pass check then runs. */
  fusedAttention: string[] | null;
}


interface SessionFactory {
  create(...args: unknown[]): Promise<unknown>;
}

interface SessionOptions {
  externalData?: unknown[];
  [option: string]: unknown;
}


/**
 * The rewrites a load on `device` makes: 4-bit projections as 8-bit integer products on wasm only
 * (WebGPU has a 4-bit kernel); the embedding and lm_head at 8 bits on wasm for every format but
 * fp32, and for fp32 too where the caller asked (`quantizeHead: true`), a float32 head computed by
 * the engine's kernel (`kernelHead`); `quantizeHead: false` keeps them in floating point for every
 * format (more memory, and no faster since the kernel: docs/models.md).
 * Where the head stays in floating point on wasm, a tied float32 one is held once, not packed a
 * second time (tied-head.ts). Not on WebGPU (not tried there):
 * the rewrite is made for onnxruntime's CPU integer kernels (docs/models.md).
 */
export function rewritesOn(device: Device, dtype?: Dtype, quantizeHead?: boolean): SessionRewriteOptions {
  const wasm = device === 'wasm';
  const int8Head = wasm && dtype !== undefined && (quantizeHead ?? dtype !== 'fp32');
  return { int8Projections: wasm, int8Head, kernelHead: int8Head, tiedHead: wasm && !int8Head };
}

/** Gives `lm` what its load's rewrites made: the counts `status()` reports, and the kernel its passes compute the lm_head with, if any. */
export function attachRewrites(lm: LanguageModel, report: SessionRewriteReport): void {
  lm.int8Projections = report.int8Projections;
  lm.int8Head = report.int8Head;
  lm.kernelHead = report.kernelHead;
  lm.tiedHead = report.tiedHead;
}

/**
 * Runs `load` (transformers.js' `from_pretrained`) with onnxruntime-web's `InferenceSession.create`
 * rewriting each model given as bytes, before the session is made:
 *
 * - inline weights become external data read straight from those bytes, so each weight is copied
 *   into wasm memory once, not twice (externalize-weights.ts says why);
 * - a graph without `num_logits_to_keep` gets it, so a pass computes the logits of the rows the
 *   engine reads only (logits-to-keep.ts);
 * - with `int8Projections`, its 4-bit projections become 8-bit integer products
 *   (int8-projections.ts), whose weights are a new buffer mounted beside the others;
 * - with `kernelHead` (and `int8Head`), a float32 lm_head and the embedding tied to it leave the
 *   graph: the model's passes compute them from one int8 matrix in the engine's kernel
 *   (kernel-head.ts, int8-head-kernel.ts), which runs the 8-bit product in about a third of
 *   onnxruntime-web's MatMulInteger time at one row (docs/memory.md, "The trade-off removed");
 * - with `int8Head`, its embedding Gather and lm_head product (those still in the graph) read one
 *   int8 matrix (int8-head.ts), mounted the same way; the float matrix leaves the graph;
 * - with `tiedHead` (and no int8 head), a tied float32 embedding and lm_head read one transposed
 *   matrix that onnxruntime does not pack a second copy of (tied-head.ts), mounted the same way;
 * - last, every value's shape, its symbolic dimensions named, in the graph's `value_info`, so that
 *   onnxruntime's allocation planner is not quadratic in the graph's length (symbolic-shapes.ts);
 *   where onnxruntime refuses the graph with them, the session is created once more without them.
 *
 * Where `kept` is given and the model file came with its checked SHA-256 (model-handoff.ts), what
 * the rewrites made is kept in storage (rewritten-graphs.ts) while the session is created, and the
 * next load of the same file with the same rewrites reads it instead of making it again; where
 * that kept rewrite needs nothing of the file (rewritten-graphs.ts, `complete`), the load's fetch
 * does not read the file at all (`ModelHandoff.unneeded`).
 *
 * The factory is restored when `load` settles. In a browser, where buffers were released, a
 * garbage collection is then prompted (collection-prompt.ts) beside the model's first work, not
 * before it: `collecting` settles when it is over, with `report.collected` set (a load waited
 * 90-100 ms for it, TinyStories' return visit, 2026-12-03).
 * A model already in external-data form is created as it was. Either way, once the session exists
 * the bytes it was made from are released (release-buffer.ts). A model given any other way (a URL,
 * an offset into a buffer) is left to onnxruntime.
 */
export async function withSessionRewrites<T>(
  factory: SessionFactory,
  load: () => Promise<T>,
  handoff: ModelHandoff | null = null,
  rewrites: SessionRewriteOptions = {},
  /** The load's timing: each session's rewrites and its creation by onnxruntime, as `rewrites` and `session`. */
  timer: LoadTimer | null = null,
  /** Where rewrites are kept between loads; null: made on every load. */
  kept: RewrittenGraphs | null = null,
): Promise<{ value: T; report: SessionRewriteReport; collecting: Promise<boolean> | null }> {
  const original = factory.create;
  const report: SessionRewriteReport = { sessions: 0, bytes: 0, logitsToKeep: 0, int8Projections: 0, int8Head: { embedding: false, lmHead: false, engineKernel: false, floatBytesDropped: 0, int8Bytes: 0 }, kernelHead: null, tiedHead: 0, released: 0, collected: null, fusedAttention: [] };
  // Released buffers that a browser API has seen go at a collection only (collection-prompt.ts).
  const witness = new CollectionWitness();
  /** The bytes a buffer transformers.js read stands for: the deposited file its ticket names, or itself. */
  const resolve = <D>(data: D): D => ((data instanceof Uint8Array && handoff?.claim(data)) || data) as D;
  const create = async (self: unknown, read: Uint8Array, options: SessionOptions | undefined) => {
    const endRewrites = timer?.begin('rewrites');
    // What transformers.js read may be a ticket: the bytes are then the file the fetch deposited (model-handoff.ts).
    const readData = (options?.externalData ?? []).map((file) => (isFile(file) ? file.data : null));
    let model = resolve(read);
    const given = (options?.externalData ?? []).map((file) => (isFile(file) ? { ...file, data: resolve(file.data) } : file));
    // Kept only for a model whole in one file: a rewrite of one with external data would depend on those files too.
    const sourceOf = (bytes: Uint8Array) => (kept && given.length === 0 ? (handoff?.sourceOf(bytes) ?? null) : null);
    const signature = rewriteSignature(rewrites, !report.kernelHead);
    const keptSource = sourceOf(model);
    let partsOnDisk = false;
    /** The rewrite (kept, or made and kept while the session is created) and the session made with it; `opened`: kept parts mounted unread (part-on-disk.ts). */
    let shapesTried = false;
    const attempt = async (opened: boolean, shapes: boolean) => {
      let rewrite: SessionRewrite | null = keptSource ? await kept!.get(keptSource, signature, timer, opened) : null;
      // A file left unread (model-fetch.ts) is read after all where the kept rewrite missed or needs it.
      if (handoff?.isUnread(model) && (!rewrite || rewrite.inline)) model = await handoff.fill(model);
      const source = sourceOf(model);
      const made = !rewrite;
      rewrite ??= rewriteSession(model, given, rewrites, !report.kernelHead);
      if (!shapes && rewrite.counts.shapes > 0) rewrite = { ...rewrite, graph: withoutShapes(rewrite.graph), counts: { ...rewrite.counts, shapes: 0 } };
      shapesTried = rewrite.counts.shapes > 0;
      const externalData = [...given, ...(rewrite.inline ? [{ path: INLINE_WEIGHTS, data: model }] : []), ...rewrite.added];
      partsOnDisk ||= rewrite.added.some((file) => file.data instanceof PartOnDisk);
      endRewrites?.();
      // Stored while the session is created; the bytes it reads stay until both are done.
      const storing = made && source ? kept!.put(source, signature, rewrite, model, timer) : null;
      const endSession = timer?.begin('session');
      try {
        const session = await original.call(self, rewrite.graph, sessionOptions(options, externalData, rewrite.counts.shapes > 0));
        return { session, rewrite, made, externalData };
      } finally {
        endSession?.();
        // The parts on disk are done with once the session exists or failed: their handles go.
        for (const file of rewrite.added) closePart(file.data);
        await storing;
      }
    };
    const attempts = async (shapes: boolean) => {
      try {
        return await attempt(onWasm(options), shapes);
      } catch (e) {
        // A kept part that could not be read as the session asked (changed on disk meanwhile): once more, the parts read whole (or the rewrite made again where they miss).
        if (!partsOnDisk) throw e;
        return attempt(false, shapes);
      }
    };
    let made: Awaited<ReturnType<typeof attempt>>;
    try {
      made = await attempts(true);
    } catch (e) {
      // onnxruntime refused the graph with its shapes named (an operator symbolic-shapes.ts followed wrongly): once more as it was before them.
      if (!shapesTried) throw e;
      made = await attempts(false);
    }
    const { session, rewrite, externalData } = made;
    addCounts(report, rewrite);
    // The session holds its own copy of every weight now: the files' bytes can go.
    const files = new Set([model, ...externalData.map((file) => (isFile(file) ? file.data : null))]);
    if (!made.made) files.add(rewrite.graph);
    for (const data of files) {
      if (!(data instanceof Uint8Array)) continue;
      // Its memory goes when its object does (a browser API may have wrapped it): watched until then.
      if (data.buffer.byteLength > 0) witness.watch(data.buffer);
      report.released += handoff?.release(data) || releaseView(data);
    }
    // And the buffers transformers.js read tickets into (mostly never-touched pages): not counted.
    for (const data of [read, ...readData]) if (data instanceof Uint8Array && !files.has(data)) releaseView(data);
    return session;
  };
  factory.create = function (this: unknown, ...args: unknown[]) {
    const [read, options] = args as [unknown, SessionOptions | undefined];
    if (!(read instanceof Uint8Array) || args.length > 2) {
      report.fusedAttention = null; // a graph this does not read
      const endSession = timer?.begin('session');
      const created = original.apply(this, args);
      return endSession ? created.finally(endSession) : created;
    }
    return create(this, read, options);
  };
  // The model's own file is not read where a kept rewrite needs nothing of it (rewritten-graphs.ts); the first session's signature.
  if (handoff && kept) handoff.unneeded = (url, sha256) => kept.complete({ url, sha256 }, rewriteSignature(rewrites, true));
  try {
    const value = await (handoff ? withHandoff(handoff, load) : load());
    const prompted = report.released > 0 && ('WorkerGlobalScope' in globalThis || 'document' in globalThis);
    const collecting = prompted
      ? promptCollection(witness).then(
          (collected) => (report.collected = collected),
          () => false,
        )
      : null;
    return { value, report, collecting };
  } finally {
    factory.create = original;
  }
}

/**
 * Whether a session runs on onnxruntime's wasm (CPU) provider alone, where kept parts are mounted
 * unread (part-on-disk.ts: each range is copied into wasm memory as it is read). Not on WebGPU,
 * where not tried: there they are read whole.
 */
function onWasm(options: SessionOptions | undefined): boolean {
  const providers = (options?.['executionProviders'] as unknown[] | undefined) ?? [];
  return providers.every((p) => {
    const name = typeof p === 'string' ? p : (p as { name?: unknown } | null)?.name;
    return name === 'wasm' || name === 'cpu';
  });
}

/**
 * The options a rewritten graph's session is created with: its external data, and where its
 * values' shapes are named (symbolic-shapes.ts) no memory pattern. With every shape known,
 * onnxruntime plans each run's intermediate tensors as one block per set of input shapes (its
 * memory pattern), and a decode step's inputs change shape at every token: measured with the
 * pattern on, an fp32 load's serving peak rose from 960–969 MiB (no shapes named) to 1,263–1,482
 * MiB; with it off, 970–973 MiB, decode and prefill within the runs' spread (docs/benchmarks.md).
 * The reuse of buffers within a run, which the named shapes give the planner, stays.
 */
function sessionOptions(options: SessionOptions | undefined, externalData: unknown[], shaped: boolean): SessionOptions | undefined {
  const withData = options?.externalData || externalData.length > 0 ? { ...options, externalData } : options;
  return shaped ? { ...withData, enableMemPattern: false } : withData;
}

/** The rewrites asked of a session, as the key of a kept rewrite: they change what is made. */
export function rewriteSignature(rewrites: SessionRewriteOptions, kernelAllowed: boolean): string {
  const on = (flag: boolean | undefined, letter: string) => (flag ? letter : '-');
  return `${on(rewrites.int8Projections, 'p')}${on(rewrites.int8Head, 'h')}${on(rewrites.kernelHead && kernelAllowed, 'k')}${on(rewrites.tiedHead, 't')}`;
}

/** Adds one session's rewrite to the load's report. */
function addCounts(report: SessionRewriteReport, rewrite: SessionRewrite): void {
  const c = rewrite.counts;
  if (c.externalized !== null) {
    report.sessions++;
    report.bytes += c.externalized;
  }
  report.fusedAttention = c.fusedAttention && report.fusedAttention ? [...new Set([...report.fusedAttention, ...c.fusedAttention])] : null;
  if (c.logitsToKeep) report.logitsToKeep++;
  report.int8Projections += c.int8Projections;
  const h = report.int8Head;
  h.embedding ||= c.int8Head.embedding;
  h.lmHead ||= c.int8Head.lmHead;
  h.engineKernel ||= c.int8Head.engineKernel;
  h.floatBytesDropped += c.int8Head.floatBytesDropped;
  h.int8Bytes += c.int8Head.int8Bytes;
  if (c.kernelHead && rewrite.kernel) report.kernelHead = { kernel: rewrite.kernel, hidden: c.kernelHead.hidden, embeds: c.kernelHead.embeds };
  report.tiedHead += c.tiedHead;
}
