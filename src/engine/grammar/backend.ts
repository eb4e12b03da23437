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

/**
 * What to constrain the reply to: any JSON object, JSON valid against a schema of the enforced
 * subset, or tool calls (`ToolCallFormat`).
 */
export type GrammarFormat = { type: 'json_object' } | { type: 'json_schema'; schema: JsonSchema } | ToolCallFormat;

/** One tool's call as the model writes it: `begin`, the arguments (JSON valid against `parameters`, on one line), `end`. */
export interface TaggedCall {
  begin: string;
  parameters: JsonSchema;
  end: string;
}

/**
 * Tool calls (chat/tool-format.ts writes them per model family). `forced`: the reply is one or
 * more calls and nothing else (tool_choice "required" or a named tool); otherwise free text (or
 * the `answer` JSON, where the request also has a response format) in which a `trigger` opens a
 * call. `single`: at most one call (parallel_tool_calls false, or a template that takes one).
 * Calls follow one another with `separator` between them.
 */
export interface ToolCallFormat {
  type: 'tool_calls';
  calls: TaggedCall[];
  separator: string;
  triggers: string[];
  forced: boolean;
  single: boolean;
  /**
   * The response format's schema where the reply may be an answer instead of calls (auto with a
   * JSON response format: then one call, or the answer); null: free text.
   */
  answer: JsonSchema | null;
}

export interface CompiledGrammar {
  /** The format, as the cache keys it. */
  readonly key: string;
  /** Whether it can no longer make matchers (its grammar worker was terminated): the cache compiles it again. */
  readonly gone?: boolean;
  dispose(): void;
}

export interface GrammarMatcher {
  /**
   * Writes the tokens allowed next into `mask` (Int32Array of ceil(vocab / 32) words): token `id`
   * is allowed ⇔ `(mask[id >> 5] >>> (id & 31)) & 1`. Stop tokens are allowed exactly when the
   * grammar is complete. `jsonSafe` (default true) also rules out the tokens JSON text may not
   * hold (token-vocabulary.ts); false where the grammar is outside JSON (a tool call's tags, free text).
   */
  fillNextTokenBitmask(mask: Int32Array, jsonSafe?: boolean): Promise<void>;
  /** Advances over `token`; false (and nothing changes) when the grammar does not allow it. */
  accept(token: number): boolean;
  /**
   * Advances over the first of `candidates` that the next mask (as `fillNextTokenBitmask` with
   * `jsonSafe` would fill it) allows, and returns it; -1 where it allows none of them (nothing
   * changes). Each candidate costs one token's walk, not the vocabulary's: where the mask would
   * be slow to fill (a length-bounded string), a greedy step asks for its best few tokens first
   * (chat/constraint.ts).
   */
  acceptFirst(candidates: readonly number[], jsonSafe?: boolean): Promise<number>;
  /** Whether a stop token was accepted: the reply is complete. */
  isTerminated(): boolean;
  dispose(): void;
}

export interface GrammarBackend {
  readonly name: string;
  /**
   * Compiles `format` for `vocab`: milliseconds to seconds of work in the grammar engine (in
   * worker-grammar-backend.ts, on a grammar worker, bounded in time and memory: past the bound,
   * 422 `schema_too_complex`).
   */
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
