import type { DtypeChoice } from '../../protocol/engine-api.ts';

export type Dtype = Exclude<DtypeChoice, 'auto'>;

/** How much a model depends on WebGPU: it runs anywhere, it is slow on wasm, or it cannot run there. */
export type WebGpuNeed = 'optional' | 'recommended' | 'required';

export interface RegistryModel {
  /** The model id on the hub (and under any mirror that copies its layout). */
  id: string;
  label: string;
  parameters: string;
  /**
   * Bytes to download for each dtype the registry offers: the ONNX graph (`onnx/model.onnx`,
   * `model_fp16`, `model_quantized` (q8), `model_q4`, `model_q4f16`) plus its external-data files,
   * when it has any (`externalData`). Sizes are the hub's listing, in decimal units; the tokenizer
   * and configs add a few MB.
   */
  files: Partial<Record<Dtype, number>>;
  /**
   * For a dtype whose weights live beside the graph: the bytes of each external-data file, in
   * order, `<graph>.onnx_data`, `<graph>.onnx_data_1`, … (transformers.js's chunk names; the repo's
   * `config.json` declares them in `transformers.js_config.use_external_data_format`). Already
   * counted in `files`.
   */
  externalData?: Partial<Record<Dtype, readonly number[]>>;
  webgpu: WebGpuNeed;
  note: string;
}

const kB = 1e3;
const MB = 1e6;
const GB = 1e9;

/** One dtype's download as the hub lists it: the graph's bytes alone, or the graph's then each external-data chunk's. */
type Listing = number | readonly [graph: number, ...data: number[]];

/** An entry's `files` and `externalData` from its listings: each file's size written once. */
function downloads(listings: Partial<Record<Dtype, Listing>>): Pick<RegistryModel, 'files' | 'externalData'> {
  const files: Partial<Record<Dtype, number>> = {};
  const externalData: Partial<Record<Dtype, readonly number[]>> = {};
  for (const [dtype, listing] of Object.entries(listings) as [Dtype, Listing][]) {
    if (typeof listing === 'number') {
      files[dtype] = listing;
      continue;
    }
    const [graph, ...data] = listing;
    files[dtype] = data.reduce((sum, chunk) => sum + chunk, graph);
    externalData[dtype] = data;
  }
  return Object.keys(externalData).length > 0 ? { files, externalData } : { files };
}

/**
 * A dtype larger than this in all (graph + external data) is not offered: more than the 32-bit
 * wasm heap of onnxruntime-web can address (it holds every weight on wasm), and no device here
 * could check that WebGPU loads it. Such files are named in a comment above their entry.
 */
export const MAX_OFFERED_BYTES = 4 * 2 ** 30;

/**
 * Recommended instruction-tuned models. Each entry's files were checked against the hub's file
 * listing of `onnx/`, found with the `search` tool (corpus `docs`), as recorded above each entry.
 * Not load-tested here: these machines cannot reach the hub. The engine runs these architectures
 * (llama, qwen2, phi3), each tested on a generated model of that family (docs/models.md).
 *
 * Looked for and not listed, because the search did not return the `onnx/` listing, so the files
 * and sizes cannot be confirmed (the engine handles both architectures):
 * - Qwen3 0.6B: queries "onnx-community/Qwen3-0.6B-ONNX tree main onnx model_q4f16.onnx",
 *   "huggingface.co/onnx-community/Qwen3-0.6B-ONNX/tree/main/onnx" (docs) and the same in pages
 *   returned other repositories and a blog post ("~300MB model with ~2GB ONNX data"), not the listing.
 * - Gemma 3 1B: "onnx-community/gemma-3-1b-it-ONNX tree main onnx model_q4.onnx" returned the repo's
 *   root (commit c698ac4, "Improved ONNX models (#2)", gemma3_text) but not `onnx/` (nor did the same
 *   query in pages, or ".../gemma-3-1b-it-ONNX/tree/main/onnx model_q4f16.onnx_data"); code found with
 *   find_string quotes conflicting sizes for model_q4f16 (998 MB as one file, or a 763 MB
 *   `_data` file), so neither is used.
 */
export const MODEL_REGISTRY: readonly RegistryModel[] = [
  // Query "HuggingFaceTB/SmolLM2-135M-Instruct onnx model_q4f16.onnx" →
  // huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/tree/main/onnx (commit a5cf62c, "Upload
  // improved fp16 ONNX weights (#6)"): model.onnx 654 MB, model_fp16 327 MB, model_q4 200 MB,
  // model_q4f16 134 MB. No model_quantized.onnx, so no q8. No external data.
  {
    id: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    label: 'SmolLM2 135M Instruct',
    parameters: '135M',
    ...downloads({ q4f16: 134 * MB, q4: 200 * MB, fp16: 327 * MB, fp32: 654 * MB }),
    webgpu: 'optional',
    note: 'Smallest download; quick on any device. Answers are simple.',
  },
  // Query "HuggingFaceTB/SmolLM2-360M-Instruct tree main onnx" →
  // huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct/tree/main/onnx (commit 6d8b2a3, "Upload
  // improved ONNX weights (#7)"): model.onnx 1.64 GB, model_fp16 819 MB, model_q4 417 MB,
  // model_q4f16 299 MB. No q8. No external data.
  {
    id: 'HuggingFaceTB/SmolLM2-360M-Instruct',
    label: 'SmolLM2 360M Instruct',
    parameters: '360M',
    ...downloads({ q4f16: 299 * MB, q4: 417 * MB, fp16: 819 * MB, fp32: 1.64 * GB }),
    webgpu: 'optional',
    note: 'A good balance of size and judgement; fine on wasm with q4.',
  },
  // Query "onnx-community/Qwen2.5-0.5B-Instruct onnx model_quantized.onnx model_q4f16.onnx files and
  // versions" → huggingface.co/onnx-community/Qwen2.5-0.5B-Instruct/tree/main/onnx (commit 516c8d0,
  // "Upload folder using huggingface_hub"): model.onnx 1.99 GB, model_fp16 997 MB,
  // model_quantized 512 MB, model_q4 786 MB, model_q4f16 483 MB (also bnb4, int8, uint8, which
  // the engine does not read). No external data.
  {
    id: 'onnx-community/Qwen2.5-0.5B-Instruct',
    label: 'Qwen2.5 0.5B Instruct',
    parameters: '494M',
    ...downloads({ q4f16: 483 * MB, q8: 512 * MB, q4: 786 * MB, fp16: 997 * MB, fp32: 1.99 * GB }),
    webgpu: 'optional',
    note: 'Multilingual and the best follower of instructions here; q8 on wasm.',
  },
  // Query "onnx-community/Llama-3.2-1B-Instruct tree main onnx model.onnx_data model_q4.onnx
  // model_fp16.onnx" → huggingface.co/onnx-community/Llama-3.2-1B-Instruct/tree/c5b77c4…/onnx
  // (folder commit 1ae0c06, "Upload folder using huggingface_hub"; the listing of `main` itself was
  // not returned): model.onnx 524 kB + model.onnx_data 4.94 GB, model_fp16.onnx 532 kB +
  // model_fp16.onnx_data 2.47 GB, model_quantized 1.24 GB, model_q4 1.66 GB, model_q4f16 1.07 GB
  // (also bnb4, int8, uint8). fp32 (4.94 GB) is above MAX_OFFERED_BYTES, so not offered.
  // This replaces onnx-community/Llama-3.2-1B-Instruct-q4f16 (tree/main/onnx, commit ef87b2a:
  // model_q4f16.onnx 1.24 GB only), which offered nothing that runs without shader-f16.
  {
    id: 'onnx-community/Llama-3.2-1B-Instruct',
    label: 'Llama 3.2 1B Instruct',
    parameters: '1.24B',
    ...downloads({ q4f16: 1.07 * GB, q8: 1.24 * GB, q4: 1.66 * GB, fp16: [532 * kB, 2.47 * GB] }),
    webgpu: 'recommended',
    note: 'Llama 3.2 licence. q4f16 on WebGPU with shader-f16; q8 or q4 elsewhere.',
  },
  // Query "SmolLM2-1.7B-Instruct tree main onnx Upload optimized ONNX model w/ GQA (#26)" →
  // huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct/tree/main/onnx (commit 31b70e2, "Upload
  // optimized ONNX model w/ GQA (#26)"): model.onnx 166 kB + model.onnx_data 6.85 GB,
  // model_fp16.onnx 1.33 GB + model_fp16.onnx_data 2.1 GB, model_quantized 1.71 GB,
  // model_q4 1.41 GB, model_q4f16 1.11 GB (also bnb4, int8, uint8). fp32 (6.85 GB) is above
  // MAX_OFFERED_BYTES, so not offered.
  {
    id: 'HuggingFaceTB/SmolLM2-1.7B-Instruct',
    label: 'SmolLM2 1.7B Instruct',
    parameters: '1.7B',
    ...downloads({ q4f16: 1.11 * GB, q4: 1.41 * GB, q8: 1.71 * GB, fp16: [1.33 * GB, 2.1 * GB] }),
    webgpu: 'recommended',
    note: 'The strongest small SmolLM2; a large download, and slow without WebGPU.',
  },
  // Query "onnx-community/Phi-3.5-mini-instruct-onnx-web onnx model_q4f16.onnx_data" →
  // huggingface.co/onnx-community/Phi-3.5-mini-instruct-onnx-web/tree/main/onnx (commit 228ccad,
  // "Duplicate from schmuell/Phi-3.5-mini-instruct-onnx-web"): model_q4f16.onnx 220 MB +
  // model_q4f16.onnx_data 2.1 GB only.
  {
    id: 'onnx-community/Phi-3.5-mini-instruct-onnx-web',
    label: 'Phi-3.5 mini Instruct',
    parameters: '3.8B',
    ...downloads({ q4f16: [220 * MB, 2.1 * GB] }),
    webgpu: 'required',
    note: 'Only a q4f16 file: needs WebGPU with the shader-f16 feature. MIT licence.',
  },
  // Query "onnx-community/Llama-3.2-3B-Instruct tree main onnx model_quantized.onnx_data" →
  // huggingface.co/onnx-community/Llama-3.2-3B-Instruct/tree/main/onnx (commit 68d9604, "Upload
  // folder using huggingface_hub"):
  // model.onnx 907 kB + 12.9 GB, model_fp16.onnx 922 kB + 6.43 GB, model_q4.onnx 951 kB +
  // model_q4.onnx_data 3.34 GB, model_q4f16.onnx 966 kB + model_q4f16.onnx_data 2.37 GB,
  // model_quantized.onnx 1.12 MB + a `_data` file whose size the excerpt cut off (so q8 is left
  // out). fp32 and fp16 are above MAX_OFFERED_BYTES.
  {
    id: 'onnx-community/Llama-3.2-3B-Instruct',
    label: 'Llama 3.2 3B Instruct',
    parameters: '3.2B',
    ...downloads({ q4f16: [966 * kB, 2.37 * GB], q4: [951 * kB, 3.34 * GB] }),
    webgpu: 'recommended',
    note: 'Llama 3.2 licence. The largest here: q4f16 on WebGPU; q4 on wasm is slow and needs 3.3 GB.',
  },
  // Query "onnx-community/Phi-4-mini-instruct web q4f16 onnx model_q4f16.onnx_data_1" →
  // huggingface.co/onnx-community/Phi-4-mini-instruct-web-q4f16/tree/main/onnx (commit d6eb3e0,
  // "Upload folder using huggingface_hub"; tagged phi3): model_q4f16.onnx 291 kB +
  // model_q4f16.onnx_data 1.99 GB + model_q4f16.onnx_data_1 1.42 GB only (two chunks).
  {
    id: 'onnx-community/Phi-4-mini-instruct-web-q4f16',
    label: 'Phi-4 mini Instruct',
    parameters: '3.8B',
    ...downloads({ q4f16: [291 * kB, 1.99 * GB, 1.42 * GB] }),
    webgpu: 'required',
    note: 'Only a q4f16 file, in two data chunks: needs WebGPU with shader-f16. MIT licence.',
  },
];

export function findRegistryModel(id: string): RegistryModel | undefined {
  return MODEL_REGISTRY.find((m) => m.id === id);
}

export const ALL_DTYPES: readonly Dtype[] = ['q4f16', 'q4', 'q8', 'fp16', 'fp32'];

/** The dtypes to offer for a model: its entry's (the registry's by default), or every one for a model it does not know. */
export function dtypesOf(id: string, entry: RegistryModel | undefined = findRegistryModel(id)): readonly Dtype[] {
  return entry ? ALL_DTYPES.filter((d) => entry.files[d] !== undefined) : ALL_DTYPES;
}

/** How many external-data files a dtype of a registry model has (0: the weights are in the graph). */
export function dataChunksOf(entry: RegistryModel, dtype: Dtype): number {
  return entry.externalData?.[dtype]?.length ?? 0;
}
