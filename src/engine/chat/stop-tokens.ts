/**
 * What ends a reply: the model's stop tokens, and their texts. A model may spell a stop token's
 * text out of ordinary tokens (TinyStories-656K writes `<|end_story|>` piece by piece, which no
 * id check sees), so each stop token's text, decoded with special tokens kept, is also a stop
 * sequence: the reply, its deltas and its logprobs end before it.
 */
import type { LanguageModel } from '../model/language-model.ts';

/**
 * Every token that ends the reply: generation_config.json's `eos_token_id` (a list for Llama 3,
 * Qwen and Phi-3.5), config.json's, and the tokenizer's end-of-sequence token.
 */
export function stopTokenIds(lm: LanguageModel): Set<number> {
  const ids = new Set<number>();
  const add = (x: unknown) => {
    if (typeof x === 'number') ids.add(x);
    else if (Array.isArray(x)) x.forEach(add);
  };
  add((lm.model as unknown as { generation_config?: { eos_token_id?: unknown } }).generation_config?.eos_token_id);
  add((lm.model.config as unknown as { eos_token_id?: unknown }).eos_token_id);
  add((lm.tokenizer as unknown as { eos_token_id?: unknown }).eos_token_id);
  return ids;
}

/** The texts of the stop tokens (special tokens kept), as stop sequences: those of two characters or more that are not only whitespace. */
export function stopTokenTexts(lm: LanguageModel, ids: Iterable<number>): string[] {
  const texts = new Set<string>();
  for (const id of ids) {
    const text = lm.tokenizer.decode([id], { skip_special_tokens: false });
    if (text.length >= 2 && text.trim() !== '') texts.add(text);
  }
  return [...texts];
}
