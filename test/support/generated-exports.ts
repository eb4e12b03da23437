/**
 * The generated exports the head tests run (int8-head, int8-head-kernel): which files each format
 * is, which models, and one export's shape as its config.json gives it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED, TINY } from './models.ts';

export const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'];
export const FILES = { fp32: 'model.onnx', fp16: 'model_fp16.onnx', q8: 'model_quantized.onnx', q4: 'model_q4.onnx', q4f16: 'model_q4f16.onnx' } as const;
export type Format = keyof typeof FILES;

/** Every format of the tiny Llama, its GQA export at q4, and each family at q4. */
export const EXPORT_CASES: [string, Format][] = [
  ...(['q4', 'q8', 'q4f16', 'fp16', 'fp32'] as const).map((f): [string, Format] => [TINY, f]),
  [`${TINY}-gqa`, 'q4'],
  ...FAMILIES.map((m): [string, Format] => [m, 'q4']),
];

export interface GeneratedExport {
  kv: { kvHeads: number; headDim: number };
  /** Vocabulary size and hidden size. */
  v: number;
  h: number;
  half: boolean;
  tied: boolean;
  /** The graph's bytes, and the session options its external data needs (fp16's). */
  graph: () => Uint8Array;
  options: () => { externalData?: { path: string; data: Uint8Array }[] };
}

export function generatedExport(model: string, format: Format): GeneratedExport {
  const dir = join(GENERATED, model);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
  const file = FILES[format];
  const read = (name: string) => new Uint8Array(readFileSync(join(dir, 'onnx', name)));
  return {
    kv: { kvHeads: config['num_key_value_heads'] ?? config['num_attention_heads']!, headDim: config['head_dim'] ?? config['hidden_size']! / config['num_attention_heads']! },
    v: config['vocab_size']!,
    h: config['hidden_size']!,
    half: format === 'fp16' || format === 'q4f16',
    tied: config['tie_word_embeddings'] !== (false as unknown as number),
    graph: () => read(file),
    options: () => (format === 'fp16' ? { externalData: [{ path: `${file}_data`, data: read(`${file}_data`) }] } : {}),
  };
}
