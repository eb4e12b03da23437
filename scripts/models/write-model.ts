/**
 * Writes one model directory in the Hugging Face layout, atomically, with a `.generator.json`
 * stamp that lets later runs skip an up-to-date model:
 *
 *   <outDir>/<name>/config.json, generation_config.json, tokenizer.json, tokenizer_config.json,
 *                   special_tokens_map.json,
 *                   onnx/model.onnx                 fp32, the reference
 *                   onnx/model_fp16.onnx (+ onnx/model_fp16.onnx_data: its weights, external data)
 *                   onnx/model_q4.onnx, onnx/model_q4f16.onnx, onnx/model_quantized.onnx (q8)
 *                   gguf/model-f32.gguf (the same weights for llama.cpp, see gguf-llama.ts),
 *                   .generator.json
 *   <outDir>/<name>-gqa/  the same weights as an onnxruntime-genai-builder-style export
 *                   (gqa-graph.ts): onnx/model.onnx, model_fp16.onnx (+ _data), model_q4.onnx,
 *                   model_q4f16.onnx; no q8, no GGUF.
 *
 * Formats per file are described in linear-formats.ts / llama-graph.ts / gqa-graph.ts.
 *
 * Files are first written to a temporary sibling directory which then replaces the old one, so
 * concurrent readers (or two generators racing, e.g. parallel test workers) never see a
 * half-written model.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GGUF_F32_FILE, writeLlamaGguf } from './gguf-llama.ts';
import { GGUF_QUANT_FILES, writeQuantGguf } from './gguf-quant.ts';
import { configJson, generationConfigJson, specialTokensMapJson, tokenizerConfigJson } from './hf-files.ts';
import { GQA_FORMATS, GQA_OPSETS, type GqaFormat, buildGqaGraph } from './gqa-graph.ts';
import { WEIGHT_FORMATS, type WeightFormat, formatOpsets } from './linear-formats.ts';
import { ONNX_META } from './family-graph.ts';
import { buildLlamaGraph } from './llama-graph.ts';
import { ropeTables } from './rope.ts';
import { type ModelSpec, specHash, validateSpec } from './specs.ts';
import { buildBpeModel, tokenizerJson } from './tokenizer.ts';
import { generateWeights } from './weights.ts';

/** Bump when the output format changes in a way the source hash would not capture. */
export const GENERATOR_VERSION = 2;
export const STAMP_FILE = '.generator.json';

/** Relative paths of the ONNX files. */
export const ONNX_FILES: Record<WeightFormat, string> = {
  fp32: 'onnx/model.onnx',
  fp16: 'onnx/model_fp16.onnx',
  q4: 'onnx/model_q4.onnx',
  q4f16: 'onnx/model_q4f16.onnx',
  q8: 'onnx/model_quantized.onnx',
};

/** Formats whose weights go to external data (`<file>_data`), declared in config.json. */
export const EXTERNAL_DATA_FORMATS: readonly WeightFormat[] = ['fp16'];
/** Initializers at least this large go to the external data file; small constants stay inline. */
export const EXTERNAL_DATA_MIN_BYTES = 1024;

/** `onnx/model_fp16.onnx_data` for 'fp16': the file transformers.js fetches beside the graph. */
export function externalDataFile(format: WeightFormat): string | undefined {
  return EXTERNAL_DATA_FORMATS.includes(format) ? `${ONNX_FILES[format]}_data` : undefined;
}

/** The formats written for a spec: every hub dtype for an Optimum-style spec, GQA_FORMATS for a GQA sibling. */
export function specFormats(spec: ModelSpec): readonly WeightFormat[] {
  if (spec.gqa) return GQA_FORMATS;
  return spec.q8 ? WEIGHT_FORMATS : ['fp32'];
}

export interface FileRecord {
  readonly bytes: number;
  readonly sha256: string;
}

export interface Stamp {
  readonly generator: string;
  readonly version: number;
  /** sha256 over the generator's own source files: editing the generator invalidates models. */
  readonly sourceHash: string;
  readonly spec: string;
  readonly specHash: string;
  /** Every generated file (relative path → size and sha256). */
  readonly files: Readonly<Record<string, FileRecord>>;
}

export interface WriteResult {
  readonly name: string;
  readonly dir: string;
  /** True when an up-to-date model was found and nothing was written. */
  readonly skipped: boolean;
  readonly seconds: number;
  readonly stamp: Stamp;
}

const HERE = dirname(fileURLToPath(import.meta.url));

let cachedSourceHash: string | undefined;
/** sha256 over the names and contents of the generator's .ts files. */
export function generatorSourceHash(): string {
  if (cachedSourceHash) return cachedSourceHash;
  const h = createHash('sha256');
  for (const f of readdirSync(HERE).filter((f) => f.endsWith('.ts')).sort()) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(HERE, f)));
    h.update('\0');
  }
  cachedSourceHash = h.digest('hex');
  return cachedSourceHash;
}

/** Reads `<dir>/.generator.json`, or undefined if missing/unreadable. */
export function readStamp(dir: string): Stamp | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, STAMP_FILE), 'utf8')) as Stamp;
  } catch {
    return undefined;
  }
}

function expectedStampHeader(spec: { readonly name: string }) {
  return {
    generator: 'jev-local scripts/models',
    version: GENERATOR_VERSION,
    sourceHash: generatorSourceHash(),
    spec: spec.name,
    specHash: specHash(spec),
  };
}

/** The stamp's header fields for `spec` (any spec object with a name: hashed canonically). */
export function stampHeader(spec: { readonly name: string }) {
  return expectedStampHeader(spec);
}

/** True when `dir` holds a complete model generated by this generator from this spec. */
export function isUpToDate(spec: { readonly name: string }, dir: string): boolean {
  const stamp = readStamp(dir);
  if (!stamp) return false;
  const want = expectedStampHeader(spec);
  if (
    stamp.generator !== want.generator ||
    stamp.version !== want.version ||
    stamp.sourceHash !== want.sourceHash ||
    stamp.specHash !== want.specHash ||
    !stamp.files
  ) {
    return false;
  }
  for (const [rel, rec] of Object.entries(stamp.files)) {
    try {
      if (statSync(join(dir, rel)).size !== rec.bytes) return false;
    } catch {
      return false;
    }
  }
  return true;
}

export interface WriteOptions {
  readonly force?: boolean;
  readonly log?: (message: string) => void;
}

/** Generates `spec` into `<outDir>/<spec.name>` unless an up-to-date copy is there (or `force`). */
export function writeModel(spec: ModelSpec, outDir: string, opts: WriteOptions = {}): WriteResult {
  validateSpec(spec);
  const log = opts.log ?? (() => {});
  const dir = join(outDir, spec.name);
  const t0 = performance.now();
  if (!opts.force && isUpToDate(spec, dir)) {
    return { name: spec.name, dir, skipped: true, seconds: 0, stamp: readStamp(dir) as Stamp };
  }

  mkdirSync(outDir, { recursive: true });
  const tmp = join(outDir, `.${spec.name}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  mkdirSync(join(tmp, 'onnx'), { recursive: true });
  const files: Record<string, FileRecord> = {};
  const lap = (() => {
    let last = performance.now();
    return (what: string) => {
      const now = performance.now();
      log(`  ${spec.name}: ${what} (${((now - last) / 1000).toFixed(2)} s)`);
      last = now;
    };
  })();

  try {
    const writeText = (rel: string, text: string) => {
      const data = Buffer.from(text, 'utf8');
      writeFileSync(join(tmp, rel), data);
      files[rel] = { bytes: data.length, sha256: createHash('sha256').update(data).digest('hex') };
    };

    const formats = specFormats(spec);
    const external = formats.filter((f) => EXTERNAL_DATA_FORMATS.includes(f)).map((f) => ONNX_FILES[f].slice('onnx/'.length));
    writeText('config.json', configJson(spec, external));
    writeText('generation_config.json', generationConfigJson());
    writeText('tokenizer_config.json', tokenizerConfigJson(spec));
    writeText('special_tokens_map.json', specialTokensMapJson());
    const bpe = buildBpeModel(spec.vocabSize, spec.seed);
    writeText('tokenizer.json', tokenizerJson(bpe));
    lap(`tokenizer (${bpe.stats.trained} trained + ${bpe.stats.required} required + ${bpe.stats.synthetic} synthetic merges)`);

    const weights = generateWeights(spec);
    const rope = ropeTables(spec);
    lap('weights');

    for (const format of formats) {
      const rel = ONNX_FILES[format];
      const graph = spec.gqa ? buildGqaGraph(spec, weights, rope, format as GqaFormat) : buildLlamaGraph(spec, weights, rope, format);
      const dataRel = externalDataFile(format);
      if (dataRel) {
        const location = dataRel.slice('onnx/'.length);
        const chunks = graph.externalize(location, EXTERNAL_DATA_MIN_BYTES);
        const hash = createHash('sha256');
        const bytes = writeChunks(join(tmp, dataRel), chunks, hash);
        files[dataRel] = { bytes, sha256: hash.digest('hex') };
        lap(`${dataRel} (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
      }
      const proto = graph.toModelProto({
        ...ONNX_META,
        docString: `Random-weight ${spec.name} (${format}) generated by scripts/models; for tests only.`,
        ...(spec.gqa ? { extraOpsets: GQA_OPSETS } : formatOpsets(format).length ? { extraOpsets: formatOpsets(format) } : {}),
      });
      const hash = createHash('sha256');
      const bytes = proto.writeToFile(join(tmp, rel), hash);
      if (bytes >= 2 ** 31) throw new Error(`${rel} is ${bytes} bytes: over the 2 GB protobuf limit`);
      files[rel] = { bytes, sha256: hash.digest('hex') };
      lap(`${rel} (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
    }

    if (!spec.gqa) {
      mkdirSync(join(tmp, dirname(GGUF_F32_FILE)), { recursive: true });
      const hash = createHash('sha256');
      const bytes = writeLlamaGguf(join(tmp, GGUF_F32_FILE), spec, weights, bpe, hash);
      files[GGUF_F32_FILE] = { bytes, sha256: hash.digest('hex') };
      lap(`${GGUF_F32_FILE} (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
    }
    // the same projections as the ONNX q4 and q8 files, for the llama.cpp peer (gguf-quant.ts)
    for (const quant of spec.gqa ? [] : (['q4_0', 'q8_0'] as const)) {
      const rel = GGUF_QUANT_FILES[quant];
      const hash = createHash('sha256');
      const bytes = writeQuantGguf(join(tmp, rel), spec, weights, bpe, quant, hash);
      files[rel] = { bytes, sha256: hash.digest('hex') };
      lap(`${rel} (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
    }

    const stamp: Stamp = { ...stampHeader(spec), files };
    writeFileSync(join(tmp, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
    replaceDir(tmp, dir, spec);
    return { name: spec.name, dir, skipped: false, seconds: (performance.now() - t0) / 1000, stamp };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Writes `chunks` to `path` in order, feeding `hash`; returns the bytes written. */
function writeChunks(path: string, chunks: readonly Uint8Array[], hash: ReturnType<typeof createHash>): number {
  const fd = openSync(path, 'w');
  let written = 0;
  try {
    for (const chunk of chunks) {
      let off = 0;
      while (off < chunk.length) off += writeSync(fd, chunk, off, Math.min(chunk.length - off, 1 << 28));
      hash.update(chunk);
      written += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

/** Moves `tmp` to `dir`, replacing an old `dir`; tolerates a concurrent generator winning the race. */
export function replaceDir(tmp: string, dir: string, spec: { readonly name: string }): void {
  const olds: string[] = [];
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (existsSync(dir)) {
        const old = join(dirname(dir), `.${spec.name}.old-${process.pid}-${attempt}-${Math.random().toString(36).slice(2, 10)}`);
        try {
          renameSync(dir, old);
          olds.push(old);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      try {
        renameSync(tmp, dir);
        return;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
        // another process put its copy in place between our two renames; identical if up to date
        if (isUpToDate(spec, dir)) return;
      }
    }
    throw new Error(`could not replace ${dir}`);
  } finally {
    for (const old of olds) rmSync(old, { recursive: true, force: true });
  }
}
