/**
 * The 8-bit token embedding and lm_head, computed by the engine's own WebAssembly kernel
 * (int8-head-kernel.wat) instead of onnxruntime.
 *
 * int8-head.ts gives onnxruntime the lm_head as `MatMulInteger`, which onnxruntime-web's wasm build
 * runs at about 0.4× the rate of its float32 SGEMM at one row (docs/memory.md): 5–7 ms of a q4
 * decode step of the 135M-shaped model at 1 thread. This kernel reads the same int8 matrix with
 * `i32x4.dot_i16x8_s`, four vocabulary rows at a time, and computes the same logits, bit for bit
 * (test/engine/int8-head-kernel.test.ts): each row of the hidden state rounded to 255 levels as
 * int8-projections.ts' `roundRows` does (round half to even), the exact int32 product, then
 * `float(product) · s[v] · r` in float32, in that order (as MatMulIntegerToFloat, then the row's Mul).
 *
 * The matrix Q [V, H] (padded to Hp, a multiple of 16) and its scales live in the kernel's own
 * memory, once: the graph keeps neither (kernel-head.ts), and the embedding rows are read from the
 * same Q, y[h] = float(Q[id, h]) · s[id], as int8-head.ts' Gather, Cast and Mul compute them.
 *
 * The memory is sized once, at `create`, for Q, the scales and one row's scratch: it never grows,
 * so the views stay valid. It is released with the object.
 */
import { INT8_HEAD_KERNEL_WASM } from './int8-head-kernel.wasm.ts';

const LEVELS = 127;
const INVERSE_LEVELS = Math.fround(1 / LEVELS);
const TINY = Math.fround(1e-30);
const PAGE = 65536;
const ALIGN = 16;

interface KernelExports {
  memory: WebAssembly.Memory;
  head(q: number, s: number, x: number, hp: number, v: number, out: number, r: number): void;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel, or null where this WebAssembly has no SIMD (the engine then leaves the head to onnxruntime). */
function kernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  try {
    const bytes = Uint8Array.from(atob(INT8_HEAD_KERNEL_WASM), (c) => c.charCodeAt(0));
    compiled = typeof WebAssembly === 'object' && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  } catch {
    compiled = null;
  }
  return compiled;
}

const aligned = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

/** Rounds half to even, as onnxruntime's Round (std::nearbyint). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

export class Int8HeadKernel {
  /** Whether this WebAssembly runs the kernel (SIMD 128). */
  static available(): boolean {
    return kernelModule() !== null;
  }

  /** A kernel for V vocabulary rows of H values, its Q and scales zero until written; null where unavailable. */
  static create(v: number, h: number): Int8HeadKernel | null {
    const module = kernelModule();
    if (!module || !(v > 0 && h > 0)) return null;
    const exports = new WebAssembly.Instance(module).exports as unknown as KernelExports;
    return new Int8HeadKernel(exports, v, h);
  }

  readonly hp: number;
  /** Q [V, Hp], row-major: vocabulary row v at v · Hp, padding zero. Written once, before use. */
  readonly q: Int8Array;
  /** s [V]: the scale of each vocabulary row. */
  readonly s: Float32Array;
  readonly #exports: KernelExports;
  readonly #x: Int16Array;
  readonly #out: Float32Array;
  readonly #at: { q: number; s: number; x: number; out: number };

  private constructor(
    exports: KernelExports,
    readonly v: number,
    readonly h: number,
  ) {
    this.#exports = exports;
    this.hp = Math.ceil(h / 16) * 16;
    const q = 0;
    const s = aligned(q + v * this.hp);
    const x = aligned(s + v * 4);
    const out = aligned(x + this.hp * 2);
    const end = out + v * 4;
    const memory = exports.memory;
    const pages = Math.ceil(end / PAGE) - memory.buffer.byteLength / PAGE;
    if (pages > 0) memory.grow(pages);
    this.#at = { q, s, x, out };
    this.q = new Int8Array(memory.buffer, q, v * this.hp);
    this.s = new Float32Array(memory.buffer, s, v);
    this.#x = new Int16Array(memory.buffer, x, this.hp);
    this.#out = new Float32Array(memory.buffer, out, v);
  }

  /** The embedding rows of `ids`, [n, H] float32: y[i, k] = float(Q[ids[i], k]) · s[ids[i]]. */
  embed(ids: readonly number[]): Float32Array {
    const { h, hp, v, q, s } = this;
    const y = new Float32Array(ids.length * h);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (!(Number.isInteger(id) && id >= 0 && id < v)) throw new RangeError(`token id ${id} is outside the vocabulary (${v})`);
      const scale = s[id]!;
      const row = id * hp;
      for (let k = 0; k < h; k++) y[i * h + k] = Math.fround(q[row + k]! * scale);
    }
    return y;
  }

  /** The logits of `rows` rows of the hidden state, [rows, H] float32 → [rows, V] float32. */
  logits(hidden: Float32Array, rows: number): Float32Array {
    const { h, hp, v } = this;
    if (hidden.length !== rows * h) throw new RangeError(`hidden state of ${hidden.length} values is not ${rows} rows of ${h}`);
    const logits = new Float32Array(rows * v);
    const x = this.#x;
    const at = this.#at;
    for (let r = 0; r < rows; r++) {
      // The row rounded to 255 levels, as roundRows: scale = max(max |x| · (1/127), 1e-30).
      let most = 0;
      for (let k = 0; k < h; k++) {
        const a = Math.abs(hidden[r * h + k]!);
        if (a > most) most = a;
      }
      const scale = Math.max(Math.fround(most * INVERSE_LEVELS), TINY);
      // Values past H stay zero: the memory starts zeroed, and nothing writes there.
      for (let k = 0; k < h; k++) x[k] = roundHalfEven(Math.fround(hidden[r * h + k]! / scale));
      this.#exports.head(at.q, at.s, at.x, hp, v, at.out, scale);
      logits.set(this.#out, r * v);
    }
    return logits;
  }
}

/** A model's lm_head (and tied embedding) computed by the kernel: the graph's names for what it feeds and reads (kernel-head.ts). */
export interface KernelHead {
  kernel: Int8HeadKernel;
  /** The graph output that replaces `logits`: the hidden state entering the lm_head, [.., H]. */
  hidden: string;
  /** The graph input that replaces the embedding's Gather, [1, n, H]; null where the graph embeds the ids itself. */
  embeds: string | null;
}
