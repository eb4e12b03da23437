/**
 * The Hugging Face JSON files of a generated model: config.json, generation_config.json,
 * tokenizer_config.json and special_tokens_map.json (tokenizer.json is in tokenizer.ts).
 */
import type { ModelSpec } from './specs.ts';
import { ENDOFTEXT_ID, IM_END_ID, IM_START_ID, SPECIAL_TOKENS } from './tokenizer.ts';

/** SmolLM2-Instruct's ChatML template (default system prompt when none is given). */
export const CHAT_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

export const BOS_TOKEN = '<|im_start|>';
export const EOS_TOKEN = '<|im_end|>';
export const PAD_TOKEN = '<|endoftext|>';
export const UNK_TOKEN = '<|endoftext|>';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/**
 * The `transformers.js_config` block of config.json, as the hub's transformers.js exports carry it:
 * which ONNX files keep their weights in `<file>_data` (a map from file name to chunk count, read
 * by transformers.js' resolveExternalDataFormat) and the KV cache's dtype per model dtype.
 */
export function transformersJsConfig(externalData: readonly string[]) {
  return {
    kv_cache_dtype: { q4f16: 'float16', fp16: 'float16' },
    use_external_data_format: Object.fromEntries(externalData.map((f) => [f, 1])),
  };
}

export function configJson(spec: ModelSpec, externalData: readonly string[] = []): string {
  return json({
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: IM_START_ID,
    eos_token_id: IM_END_ID,
    pad_token_id: ENDOFTEXT_ID,
    head_dim: spec.headDim,
    hidden_act: 'silu',
    hidden_size: spec.hiddenSize,
    initializer_range: 0.02,
    intermediate_size: spec.intermediateSize,
    max_position_embeddings: spec.maxPositionEmbeddings,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: spec.numAttentionHeads,
    num_hidden_layers: spec.numHiddenLayers,
    num_key_value_heads: spec.numKeyValueHeads,
    pretraining_tp: 1,
    rms_norm_eps: spec.rmsNormEps,
    rope_scaling: null,
    rope_theta: spec.ropeTheta,
    tie_word_embeddings: true,
    torch_dtype: 'float32',
    transformers_version: '4.46.0',
    use_cache: true,
    vocab_size: spec.vocabSize,
    'transformers.js_config': transformersJsConfig(externalData),
  });
}

export function generationConfigJson(): string {
  return json({
    _from_model_config: true,
    bos_token_id: IM_START_ID,
    eos_token_id: IM_END_ID,
    pad_token_id: ENDOFTEXT_ID,
    transformers_version: '4.46.0',
  });
}

export function tokenizerConfigJson(spec: ModelSpec): string {
  const added: Record<string, unknown> = {};
  SPECIAL_TOKENS.forEach((content, id) => {
    added[String(id)] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true };
  });
  return json({
    add_prefix_space: false,
    added_tokens_decoder: added,
    additional_special_tokens: [BOS_TOKEN, EOS_TOKEN],
    bos_token: BOS_TOKEN,
    chat_template: CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: EOS_TOKEN,
    model_max_length: spec.maxPositionEmbeddings,
    pad_token: PAD_TOKEN,
    tokenizer_class: 'GPT2Tokenizer',
    unk_token: UNK_TOKEN,
    vocab_size: spec.vocabSize,
  });
}

export function specialTokensMapJson(): string {
  const tok = (content: string) => ({ content, lstrip: false, normalized: false, rstrip: false, single_word: false });
  return json({
    additional_special_tokens: [BOS_TOKEN, EOS_TOKEN],
    bos_token: tok(BOS_TOKEN),
    eos_token: tok(EOS_TOKEN),
    pad_token: tok(PAD_TOKEN),
    unk_token: tok(UNK_TOKEN),
  });
}
