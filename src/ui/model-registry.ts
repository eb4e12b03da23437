import type { DtypeChoice } from '../protocol/engine-api.ts';

export type Dtype = Exclude<DtypeChoice, 'auto'>;

/** How much a model depends on WebGPU: it runs anywhere, it is slow on wasm, or it cannot run there. */
export type WebGpuNeed = 'optional' | 'recommended' | 'required';

export interface RegistryModel {
  /** The model id on the hub (and under any mirror that copies its layout). */
  id: string;
  label: string;
  parameters: string;
  /**
   * Bytes of the ONNX file of each dtype the repository offers as one file (the engine reads
   * `onnx/model.onnx`, `model_fp16`, `model_quantized` (q8), `model_q4`, `model_q4f16`). Sizes are
   * the hub's listing, in decimal units; the tokenizer and configs add a few MB.
   */
  files: Partial<Record<Dtype, number>>;
  webgpu: WebGpuNeed;
  note: string;
}

const MB = 1e6;
const GB = 1e9;

/**
 * Recommended instruction-tuned models. Each entry's files were checked against the hub's file
 * listing of `onnx/` on the `main` branch, found with the `search` tool (corpus `docs`), as
 * recorded above each entry. Not load-tested here: these machines cannot reach the hub.
 */
export const MODEL_REGISTRY: readonly RegistryModel[] = [
  // Query "HuggingFaceTB/SmolLM2-135M-Instruct onnx model_q4f16.onnx" →
  // huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/tree/main/onnx (commit a5cf62c, "Upload
  // improved fp16 ONNX weights (#6)"): model.onnx 654 MB, model_fp16 327 MB, model_q4 200 MB,
  // model_q4f16 134 MB. No model_quantized.onnx, so no q8.
  {
    id: 'HuggingFaceTB/SmolLM2-135M-Instruct',
    label: 'SmolLM2 135M Instruct',
    parameters: '135M',
    files: { q4f16: 134 * MB, q4: 200 * MB, fp16: 327 * MB, fp32: 654 * MB },
    webgpu: 'optional',
    note: 'Smallest download; quick on any device. Answers are simple.',
  },
  // Query "HuggingFaceTB/SmolLM2-360M-Instruct tree main onnx" →
  // huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct/tree/main/onnx (commit 6d8b2a3, "Upload
  // improved ONNX weights (#7)"): model.onnx 1.64 GB, model_fp16 819 MB, model_q4 417 MB,
  // model_q4f16 299 MB. No q8.
  {
    id: 'HuggingFaceTB/SmolLM2-360M-Instruct',
    label: 'SmolLM2 360M Instruct',
    parameters: '360M',
    files: { q4f16: 299 * MB, q4: 417 * MB, fp16: 819 * MB, fp32: 1.64 * GB },
    webgpu: 'optional',
    note: 'A good balance of size and judgement; fine on wasm with q4.',
  },
  // Query "onnx-community/Qwen2.5-0.5B-Instruct onnx model_quantized.onnx model_q4f16.onnx files and
  // versions" → huggingface.co/onnx-community/Qwen2.5-0.5B-Instruct/tree/main/onnx (commit 516c8d0,
  // "Upload folder using huggingface_hub"): model.onnx 1.99 GB, model_fp16 997 MB,
  // model_quantized 512 MB, model_q4 786 MB, model_q4f16 483 MB (also bnb4, int8, uint8, which
  // the engine does not read).
  {
    id: 'onnx-community/Qwen2.5-0.5B-Instruct',
    label: 'Qwen2.5 0.5B Instruct',
    parameters: '494M',
    files: { q4f16: 483 * MB, q8: 512 * MB, q4: 786 * MB, fp16: 997 * MB, fp32: 1.99 * GB },
    webgpu: 'optional',
    note: 'Multilingual and the best follower of instructions here; q8 on wasm.',
  },
  // Query "onnx-community/Llama-3.2-1B-Instruct tree main onnx model_q4f16.onnx" →
  // huggingface.co/onnx-community/Llama-3.2-1B-Instruct-q4f16/tree/main/onnx (commit ef87b2a,
  // "Upload onnx/model_q4f16.onnx with huggingface_hub (#2)"): model_q4f16.onnx 1.24 GB only.
  {
    id: 'onnx-community/Llama-3.2-1B-Instruct-q4f16',
    label: 'Llama 3.2 1B Instruct',
    parameters: '1.24B',
    files: { q4f16: 1.24 * GB },
    webgpu: 'required',
    note: 'Only a q4f16 file: needs WebGPU with the shader-f16 feature. Llama 3.2 licence.',
  },
  // Query "HuggingFaceTB/SmolLM2-1.7B-Instruct tree main onnx model_q4f16.onnx" →
  // huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct/tree/main/onnx (commit 31b70e2, "Upload
  // optimized ONNX model w/ GQA (#26)"): model_q4f16 1.11 GB, model_q4 1.41 GB,
  // model_quantized 1.71 GB; fp32 and fp16 keep their weights in separate `.onnx_data` files
  // (6.85 GB, 2.1 GB), which this engine does not load, so they are not offered.
  {
    id: 'HuggingFaceTB/SmolLM2-1.7B-Instruct',
    label: 'SmolLM2 1.7B Instruct',
    parameters: '1.7B',
    files: { q4f16: 1.11 * GB, q4: 1.41 * GB, q8: 1.71 * GB },
    webgpu: 'recommended',
    note: 'The strongest here; a large download, and slow without WebGPU.',
  },
];

export function findRegistryModel(id: string): RegistryModel | undefined {
  return MODEL_REGISTRY.find((m) => m.id === id);
}

export const ALL_DTYPES: readonly Dtype[] = ['q4f16', 'q4', 'q8', 'fp16', 'fp32'];

/** The dtypes to offer for a model: the registry's, or every one for a model it does not know. */
export function dtypesOf(id: string): readonly Dtype[] {
  const entry = findRegistryModel(id);
  return entry ? ALL_DTYPES.filter((d) => entry.files[d] !== undefined) : ALL_DTYPES;
}
