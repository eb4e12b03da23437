/**
 * The door of the grammar room: what a grammar engine offers the chat loop. A backend compiles a
 * response format for a model's vocabulary into a grammar, and makes matchers over a grammar: a
 * matcher says which tokens may come next (a bitmask over the vocabulary), takes the token the
 * sampler drew, and says when the grammar is complete. xgrammar-backend.ts is the one
 * implementation (@mlc-ai/web-xgrammar); another grammar engine is another file behind this
 * interface.
 *
 * Compiled grammars and matchers hold memory of the engine's own (wasm): each is disposed exactly
 * once, by whoever made it (grammar-cache.ts for grammars, the chat loop for matchers).
 */
import type { JsonSchema } from '../../contract/index.ts';
import type { TokenVocabulary } from './token-vocabulary.ts';

/** What to constrain the reply to: any JSON object, or JSON valid against a schema of the enforced subset. */
export type GrammarFormat = { type: 'json_object' } | { type: 'json_schema'; schema: JsonSchema };

export interface CompiledGrammar {
  /** The format, as the cache keys it. */
  readonly key: string;
  dispose(): void;
}

export interface GrammarMatcher {
  /**
   * Writes the tokens allowed next into `mask` (Int32Array of ceil(vocab / 32) words): token `id`
   * is allowed ⇔ `(mask[id >> 5] >>> (id & 31)) & 1`. Stop tokens are allowed exactly when the
   * grammar is complete.
   */
  fillNextTokenBitmask(mask: Int32Array): Promise<void>;
  /** Advances over `token`; false (and nothing changes) when the grammar does not allow it. */
  accept(token: number): boolean;
  /** Whether a stop token was accepted: the reply is complete. */
  isTerminated(): boolean;
  dispose(): void;
}

export interface GrammarBackend {
  readonly name: string;
  /** Compiles `format` for `vocab` (synchronous work in the grammar engine: milliseconds to seconds). */
  compile(vocab: TokenVocabulary, format: GrammarFormat): Promise<CompiledGrammar>;
  matcher(grammar: CompiledGrammar): Promise<GrammarMatcher>;
  /** Releases what the backend keeps for `vocab` (its tokenizer tables); grammars compiled for it must be disposed first. */
  forget(vocab: TokenVocabulary): void;
}

/** Whether a bitmask allows no token at all. */
export function maskIsEmpty(mask: Int32Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) return false;
  return true;
}

/** Whether a bitmask allows `token`. */
export function maskAllows(mask: Int32Array, token: number): boolean {
  return ((mask[token >> 5]! >>> (token & 31)) & 1) === 1;
}
