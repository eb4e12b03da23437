import type { KvCache } from './kv-cache.ts';
import type { LanguageModel } from './language-model.ts';

/**
 * The key/values of the last conversation the model read (its prompt and the reply it wrote).
 * A request that extends that conversation prefills only its new tokens; one that shares only a
 * prefix of it reuses that prefix (where the cache sits in CPU memory); any other starts cold.
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
    if (held && !held.disposed) {
      // The longest shared token prefix, leaving at least one prompt token to feed.
      let common = 0;
      const limit = Math.min(ids.length, prompt.length - 1);
      while (common < limit && ids[common] === prompt[common]) common++;
      if (common === ids.length) return { cache: held, reused: common };
      // The conversation diverged (an edited turn, or a reply that re-tokenizes differently):
      // keep the shared part where the cache can be cut.
      const cut = common > 0 ? held.truncated(common) : null;
      held.dispose();
      if (cut) return { cache: cut, reused: common };
    }
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
