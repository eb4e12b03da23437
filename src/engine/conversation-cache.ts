import type { KvCache } from './kv-cache.ts';
import type { LanguageModel } from './language-model.ts';

/**
 * The key/values of the last conversation the model read (its prompt and the reply it wrote).
 * A request that extends exactly that conversation prefills only its new tokens; any other
 * request starts cold and replaces it.
 */
export class ConversationCache {
  #ids: number[] = [];
  #cache: KvCache | null = null;

  /** The cache to continue from for `prompt`, and how many of its tokens it already holds. */
  take(lm: LanguageModel, prompt: readonly number[]): { cache: KvCache; reused: number } {
    const held = this.#cache;
    const ids = this.#ids;
    this.#cache = null;
    this.#ids = [];
    if (held && !held.disposed && ids.length < prompt.length && ids.every((t, i) => prompt[i] === t)) {
      return { cache: held, reused: ids.length };
    }
    held?.dispose();
    return { cache: lm.emptyCache(), reused: 0 };
  }

  keep(ids: readonly number[], cache: KvCache): void {
    this.#cache?.dispose();
    this.#ids = [...ids];
    this.#cache = cache;
  }

  get length(): number {
    return this.#ids.length;
  }

  clear(): void {
    this.#cache?.dispose();
    this.#cache = null;
    this.#ids = [];
  }
}
