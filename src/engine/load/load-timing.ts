import type { LastLoad, LoadPhase } from '../../protocol/engine-api.ts';

/**
 * The phases of a load, most specific first: where spans overlap (a storage read inside the
 * tokenizer's load, a wasm compile inside a session's creation, two files read at once), each
 * instant of the load goes to the first phase in this list that was running then, and an instant
 * no phase covered to `other` (transformers.js' own work, the memory check, the choice of format).
 * So the phases never count a millisecond twice and add up to the total.
 */
export const LOAD_PHASES: readonly Exclude<LoadPhase, 'other'>[] = ['integrity', 'storageRead', 'download', 'wasm', 'rewrites', 'session', 'firstPass', 'tokenizer'];

interface Span {
  phase: Exclude<LoadPhase, 'other'>;
  start: number;
  end: number | null;
}

/**
 * The timing of one load (`status().lastLoad`): spans of its phases marked with
 * `performance.now()` where the load path does the work (load-model.ts, session-rewrites.ts,
 * model-fetch.ts, storage/integrity-cache.ts), and the bytes it read from the network and from the
 * browser's cache. One recorder per load, passed down the load path; none where nothing is timed.
 */
export class LoadTimer {
  readonly #spans: Span[] = [];
  readonly #start: number;
  #bytesFetched = 0;
  #bytesCached = 0;
  #keptReadAsAsked = 0;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.#start = now();
  }

  /** Marks the start of a span of `phase`; the function returned marks its end (once; later calls do nothing). */
  begin(phase: Exclude<LoadPhase, 'other'>): () => void {
    const span: Span = { phase, start: this.now(), end: null };
    this.#spans.push(span);
    return () => {
      if (span.end === null) span.end = this.now();
    };
  }

  /** Runs `work` as a span of `phase`, ended when it settles (either way). */
  async time<T>(phase: Exclude<LoadPhase, 'other'>, work: () => T | Promise<T>): Promise<T> {
    const end = this.begin(phase);
    try {
      return await work();
    } finally {
      end();
    }
  }

  /** Bytes of model files received from the network (what a resumed download kept from before not among them). */
  fetched(bytes: number): void {
    this.#bytesFetched += bytes;
  }

  /** Bytes of model files read from the browser's cache. */
  cached(bytes: number): void {
    this.#bytesCached += bytes;
  }

  /** Bytes of a kept part read from disk as the session asked for them (part-on-disk.ts). */
  readAsAsked(bytes: number): void {
    this.#keptReadAsAsked += bytes;
  }

  /** The load until now: each phase's exclusive milliseconds (spans not ended are left out), adding up to `totalMs`, and each phase's own running time. */
  report(): LastLoad {
    const end = this.now();
    const totalMs = end - this.#start;
    const phases = Object.fromEntries([...LOAD_PHASES, 'other'].map((p) => [p, 0])) as Record<LoadPhase, number>;
    const spans = this.#spans.filter((s): s is Span & { end: number } => s.end !== null).map((s) => ({ ...s, start: Math.max(s.start, this.#start), end: Math.min(s.end, end) }));
    const cuts = [...new Set([this.#start, end, ...spans.flatMap((s) => [s.start, s.end])])].filter((t) => t >= this.#start && t <= end).sort((a, b) => a - b);
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [from, to] = [cuts[i]!, cuts[i + 1]!];
      let phase: LoadPhase = 'other';
      for (const p of LOAD_PHASES) {
        if (spans.some((s) => s.phase === p && s.start <= from && s.end >= to)) {
          phase = p;
          break;
        }
      }
      phases[phase] += to - from;
    }
    const round = (ms: number) => Math.round(ms * 10) / 10;
    for (const p of Object.keys(phases) as LoadPhase[]) phases[p] = round(phases[p]);
    const running = Object.fromEntries(LOAD_PHASES.map((p) => [p, round(covered(spans.filter((s) => s.phase === p)))])) as LastLoad['running'];
    return { totalMs: round(totalMs), phases, running, bytesFetched: this.#bytesFetched, fromCache: this.#bytesFetched === 0 && this.#bytesCached > 0, keptReadAsAsked: this.#keptReadAsAsked };
  }
}

/** The length of the union of `spans` (each instant once, however many spans cover it). */
function covered(spans: readonly { start: number; end: number }[]): number {
  let total = 0;
  let reached = -Infinity;
  for (const { start, end } of [...spans].sort((a, b) => a.start - b.start)) {
    const from = Math.max(start, reached);
    if (end > from) total += end - from;
    reached = Math.max(reached, end);
  }
  return total;
}

type Compile = (...args: never[]) => Promise<unknown>;
const WASM_CALLS = ['compile', 'compileStreaming', 'instantiate', 'instantiateStreaming'] as const;

/**
 * Runs `work` with every WebAssembly compile and instantiation it starts timed as `wasm`
 * (onnxruntime's module at the first session of a worker, fetched with it; the engine's own
 * kernels). The functions are restored when `work` settles. Without a timer, `work` runs as it is.
 */
export async function timingWasm<T>(timer: LoadTimer | null | undefined, work: () => Promise<T>): Promise<T> {
  const wasm = globalThis.WebAssembly as unknown as Record<string, Compile | undefined> | undefined;
  if (!timer || !wasm) return work();
  const originals = new Map<string, Compile>();
  for (const name of WASM_CALLS) {
    const original = wasm[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    wasm[name] = function (this: unknown, ...args: never[]) {
      return timer.time('wasm', () => original.apply(this, args));
    } as Compile;
  }
  try {
    return await work();
  } finally {
    for (const [name, original] of originals) wasm[name] = original;
  }
}
