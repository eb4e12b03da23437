import type { PreTrainedTokenizer } from '@huggingface/transformers';

/**
 * A model as its prompts see it: the tokenizer (with its chat template) and the context length of
 * its config, without its weights. Decision and chat prompts are built and tokenized from this,
 * so the same request gives the same prompt ids wherever the weights run: `LanguageModel` (the
 * browser's engine) is one, and a server in front of a serving engine (src/server/) makes another
 * from the same hub files.
 */
export interface TokenizerModel {
  readonly id: string;
  readonly tokenizer: PreTrainedTokenizer;
  readonly contextLength: number;
  encode(text: string, addSpecialTokens: boolean): number[];
}

/** The one way a prompt's text becomes token ids. */
export function encodeText(tokenizer: PreTrainedTokenizer, text: string, addSpecialTokens: boolean): number[] {
  return tokenizer.encode(text, { add_special_tokens: addSpecialTokens });
}

/** A model's context length from its config.json: `max_position_embeddings`, else `n_positions`, else 2048. */
export function contextLengthOf(config: unknown): number {
  const c = (config ?? {}) as Record<string, unknown>;
  return positiveInt(c['max_position_embeddings']) ?? positiveInt(c['n_positions']) ?? 2048;
}

/** A tokenizer model from a loaded tokenizer and its model's config. */
export function tokenizerModel(id: string, tokenizer: PreTrainedTokenizer, config: unknown): TokenizerModel {
  return { id, tokenizer, contextLength: contextLengthOf(config), encode: (text, add) => encodeText(tokenizer, text, add) };
}

export function positiveInt(x: unknown): number | undefined {
  return typeof x === 'number' && Number.isInteger(x) && x > 0 ? x : undefined;
}
