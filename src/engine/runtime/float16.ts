/**
 * IEEE 754 binary16 ("half", ONNX `float16`) as the engine meets it in tensor data.
 *
 * onnxruntime hands float16 tensors over in whichever array type the runtime has: a
 * `Float16Array` where the JavaScript engine has one (Chromium 135+, whose elements already read as
 * numbers), else a `Uint16Array` of the raw bits (Node 20, older browsers), which must be decoded:
 * read as numbers directly they are integers from 0 to 65535, not the values. Every read of
 * floating-point tensor data in the engine goes through `floatsOf`, which looks at the tensor's
 * declared type and its array type, so that no path reads float16 data as float32 or as bits.
 */

/** The array type float16 data comes in here: `Float16Array` if the runtime has it, else `Uint16Array` bits. */
export type Float16Data = Uint16Array | (ArrayLike<number> & { readonly BYTES_PER_ELEMENT: 2 });

const Float16ArrayCtor = (globalThis as { Float16Array?: new (length: number) => ArrayLike<number> }).Float16Array;

/** Whether this runtime has `Float16Array` (then onnxruntime returns float16 data in it). */
export const HAS_FLOAT16_ARRAY = typeof Float16ArrayCtor === 'function';

/** Whether `data` is a `Float16Array` (elements read as their values). */
export function isFloat16Array(data: unknown): boolean {
  return HAS_FLOAT16_ARRAY && data instanceof (Float16ArrayCtor as unknown as new () => object);
}

/** The value of the binary16 number with these 16 bits (sign, 5-bit exponent, 10-bit fraction). */
export function float16ToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24; // zero and subnormals
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/**
 * The binary16 bits of the number nearest to `x` (ties to even, as IEEE 754 rounds), with
 * overflow to ±Infinity, underflow through the subnormals to ±0, and NaN as the quiet NaN 0x7e00.
 */
export function numberToFloat16(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === Infinity) return sign | 0x7c00;
  if (a < 2 ** -14) {
    // Subnormal range: units of 2^-24, rounded to nearest, ties to even (may round up to the smallest normal).
    return sign | roundHalfEven(a * 2 ** 24);
  }
  let exponent = Math.floor(Math.log2(a));
  // Math.log2 can be off by one ulp near powers of two: correct it so that 1 <= a / 2^e < 2.
  if (a / 2 ** exponent >= 2) exponent += 1;
  else if (a / 2 ** exponent < 1) exponent -= 1;
  let fraction = roundHalfEven((a / 2 ** exponent - 1) * 1024);
  if (fraction === 1024) {
    fraction = 0;
    exponent += 1;
  }
  if (exponent > 15) return sign | 0x7c00;
  return sign | ((exponent + 15) << 10) | fraction;
}

function roundHalfEven(v: number): number {
  const floor = Math.floor(v);
  const rest = v - floor;
  if (rest > 0.5) return floor + 1;
  if (rest < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

let table: Float32Array | null = null;

/** All 65,536 binary16 values as float32 (exact: every binary16 number is a float32 number), built once. */
function decodeTable(): Float32Array {
  if (!table) {
    table = new Float32Array(65536);
    for (let bits = 0; bits < 65536; bits++) table[bits] = float16ToNumber(bits);
  }
  return table;
}

/** Decodes `length` float16 bit patterns from `start` into float32 values. */
export function decodeFloat16Bits(bits: Uint16Array, start = 0, length = bits.length - start): Float32Array {
  const t = decodeTable();
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = t[bits[start + i]!]!;
  return out;
}

/** A zero-filled array to hold `length` float16 values, of the type onnxruntime takes here. */
export function float16Array(length: number): Float16Data {
  return (HAS_FLOAT16_ARRAY ? new Float16ArrayCtor!(length) : new Uint16Array(length)) as Float16Data;
}

/** A float16 array holding `values` rounded to binary16 (ties to even), of the type onnxruntime takes here. */
export function toFloat16Array(values: ArrayLike<number>): Float16Data {
  const bits = Uint16Array.from({ length: values.length }, (_, i) => numberToFloat16(values[i]!));
  if (!HAS_FLOAT16_ARRAY) return bits;
  return new (Float16ArrayCtor as unknown as new (buffer: ArrayBuffer) => Float16Data)(bits.buffer);
}

/**
 * Tensor data copied element for element, whatever it holds (float32 values, float16 in a
 * Float16Array or as Uint16Array bits): the array type is kept, the elements are never converted.
 * Typed as the two array types it is in Node; a Float16Array has the same methods.
 */
export type ElementArray = Float32Array | Uint16Array;

/** A zero-filled array of `length` elements of the same array type as `like`. */
export function emptyLike(like: unknown, length: number): ElementArray {
  const ctor = (like as { constructor?: unknown } | null)?.constructor;
  if (!ArrayBuffer.isView(like) || typeof ctor !== 'function') throw new TypeError(`tensor data is ${arrayName(like)}, not a typed array`);
  return new (ctor as new (n: number) => ElementArray)(length);
}

/** The floating-point tensor types the engine reads. */
export type FloatType = 'float32' | 'float16' | 'float64';

/**
 * The values `start … start + length` of a floating-point tensor's data, as numbers: a view of
 * float32/float64 data, the elements of a `Float16Array`, or the decoded bits of a `Uint16Array`.
 * Throws when the data does not match its declared type (float16 data in a Float32Array, …).
 */
export function floatsOf(tensor: { type: string; data: unknown }, start = 0, length?: number): ArrayLike<number> {
  const { type, data } = tensor;
  const size = (data as ArrayLike<number> | undefined)?.length ?? 0;
  const n = length ?? size - start;
  if (start < 0 || n < 0 || start + n > size) throw new RangeError(`floatsOf: range ${start}+${n} is outside the tensor's ${size} values`);
  switch (type) {
    case 'float32':
      if (!(data instanceof Float32Array)) throw new TypeError(`a float32 tensor holds ${arrayName(data)}, not a Float32Array`);
      return data.subarray(start, start + n);
    case 'float64':
      if (!(data instanceof Float64Array)) throw new TypeError(`a float64 tensor holds ${arrayName(data)}, not a Float64Array`);
      return data.subarray(start, start + n);
    case 'float16':
      if (data instanceof Uint16Array) return decodeFloat16Bits(data, start, n);
      if (isFloat16Array(data)) return (data as unknown as { subarray(a: number, b: number): ArrayLike<number> }).subarray(start, start + n);
      throw new TypeError(`a float16 tensor holds ${arrayName(data)}, neither a Float16Array nor Uint16Array bits`);
    default:
      throw new TypeError(`tensor data of type ${type} is not floating point (float32, float16 or float64)`);
  }
}

function arrayName(data: unknown): string {
  return (data as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof data;
}
