/**
 * Compiled grammars kept across requests (SGLang's grammar manager, in small): compiling a schema
 * for a 150,000-token vocabulary takes from a tenth of a second to seconds (docs/structured-output.md),
 * and a client sends the same schema request after request. Keyed by the model's vocabulary and
 * the format as sent (property order matters: it is the order the output is written in); at most
 * `maxGrammars` kept, the least recently used disposed first. A new model clears it all.
 *
 * Also the one place matchers are made, so that their creations and disposals are counted
 * (`counters`): a request that ends, however it ends, leaves none behind.
 */
import type { LanguageModel } from '../model/language-model.ts';
import type { CompiledGrammar, GrammarBackend, GrammarFormat, GrammarMatcher } from './backend.ts';
import { tokenVocabulary, type TokenVocabulary } from './token-vocabulary.ts';

export interface GrammarCounters {
  /** Grammars compiled, and requests that found theirs already compiled. */
  compiles: number;
  hits: number;
  /** Grammars held now. */
  grammars: number;
  /** Milliseconds spent compiling, in all. */
  compileMs: number;
  /** Matchers made and disposed: equal between requests. */
  matchersMade: number;
  matchersDisposed: number;
}

export const DEFAULT_MAX_GRAMMARS = 16;

export class GrammarCache {
  readonly #grammars = new Map<string, Promise<CompiledGrammar>>();
  #vocab: { lm: LanguageModel; vocab: TokenVocabulary } | null = null;
  #counters: GrammarCounters = { compiles: 0, hits: 0, grammars: 0, compileMs: 0, matchersMade: 0, matchersDisposed: 0 };

  constructor(
    readonly backend: GrammarBackend,
    readonly maxGrammars = DEFAULT_MAX_GRAMMARS,
  ) {}

  /** The vocabulary of `lm` (built once per model). */
  vocabulary(lm: LanguageModel, stopTokenIds: Iterable<number>): TokenVocabulary {
    if (this.#vocab?.lm !== lm) {
      this.clear();
      this.#vocab = { lm, vocab: tokenVocabulary(lm, stopTokenIds) };
    }
    return this.#vocab.vocab;
  }

  /** The compiled grammar of `format` for `vocab`: from the cache, or compiled now. */
  async grammar(vocab: TokenVocabulary, format: GrammarFormat): Promise<CompiledGrammar> {
    const key = `${vocab.key}\u0000${JSON.stringify(format)}`;
    const held = this.#grammars.get(key);
    if (held) {
      // Most recently used: to the end of the map's order.
      this.#grammars.delete(key);
      this.#grammars.set(key, held);
      this.#counters.hits++;
      return held;
    }
    const started = performance.now();
    const compiling = this.backend.compile(vocab, format);
    this.#grammars.set(key, compiling);
    try {
      const grammar = await compiling;
      this.#counters.compiles++;
      this.#counters.compileMs += performance.now() - started;
      this.#evict();
      return grammar;
    } catch (e) {
      this.#grammars.delete(key);
      throw e;
    }
  }

  /** A matcher over `grammar`, counted; disposing it counts too. */
  async matcher(grammar: CompiledGrammar): Promise<GrammarMatcher> {
    const inner = await this.backend.matcher(grammar);
    this.#counters.matchersMade++;
    let disposed = false;
    return {
      fillNextTokenBitmask: (mask, jsonSafe) => inner.fillNextTokenBitmask(mask, jsonSafe),
      accept: (token) => inner.accept(token),
      isTerminated: () => inner.isTerminated(),
      dispose: () => {
        if (disposed) return;
        disposed = true;
        this.#counters.matchersDisposed++;
        inner.dispose();
      },
    };
  }

  counters(): GrammarCounters {
    return { ...this.#counters, grammars: this.#grammars.size };
  }

  /** Disposes every grammar and what the backend keeps for the vocabulary (a new model was loaded). */
  clear(): void {
    for (const grammar of this.#grammars.values()) void grammar.then((g) => g.dispose(), () => undefined);
    this.#grammars.clear();
    if (this.#vocab) this.backend.forget(this.#vocab.vocab);
    this.#vocab = null;
  }

  #evict(): void {
    while (this.#grammars.size > this.maxGrammars) {
      const [oldest, grammar] = this.#grammars.entries().next().value as [string, Promise<CompiledGrammar>];
      this.#grammars.delete(oldest);
      void grammar.then((g) => g.dispose(), () => undefined);
    }
  }
}
