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
import { JevError } from '../../contract/index.ts';
import type { LanguageModel } from '../model/language-model.ts';
import type { CompiledGrammar, GrammarBackend, GrammarFormat, GrammarMatcher } from './backend.ts';
import { tokenVocabulary, type TokenVocabulary } from './token-vocabulary.ts';

export interface GrammarCounters {
  /** Grammars compiled, and requests that found theirs already compiled. */
  compiles: number;
  hits: number;
  /** Grammars held now. */
  grammars: number;
  /** Milliseconds spent compiling, in all, and on the last compile. */
  compileMs: number;
  lastCompileMs: number;
  /** Compiles stopped at their bound in time or memory (422 `schema_too_complex`). */
  tooComplex: number;
  /** Matchers made and disposed: equal between requests. */
  matchersMade: number;
  matchersDisposed: number;
  /** Greedy steps whose token a matcher took from the row's best tokens, without a mask (`acceptFirst`). */
  takenFirst: number;
}

export const DEFAULT_MAX_GRAMMARS = 16;

export class GrammarCache {
  readonly #grammars = new Map<string, Promise<CompiledGrammar>>();
  /** Keys compiled by `warm` whose request has not yet asked for them. */
  readonly #warmed = new Set<string>();
  #vocab: { lm: LanguageModel; vocab: TokenVocabulary } | null = null;
  #counters: GrammarCounters = { compiles: 0, hits: 0, grammars: 0, compileMs: 0, lastCompileMs: 0, tooComplex: 0, matchersMade: 0, matchersDisposed: 0, takenFirst: 0 };

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

  /**
   * Compiles the grammar of `format` ahead of its request's turn in the engine's queue (engine.ts),
   * where it is not in the cache yet; the request's own `grammar` then finds it, and counts the
   * compile, not a hit.
   */
  async warm(vocab: TokenVocabulary, format: GrammarFormat): Promise<void> {
    const key = `${vocab.key}\u0000${JSON.stringify(format)}`;
    if (this.#grammars.has(key) && (await this.#live(key))) return;
    if (this.#grammars.has(key)) return; // another request compiles it meanwhile
    this.#warmed.add(key);
    try {
      await this.#compile(key, vocab, format);
    } catch (e) {
      this.#warmed.delete(key);
      throw e;
    }
  }

  /** The compiled grammar of `format` for `vocab`: from the cache, or compiled now. */
  async grammar(vocab: TokenVocabulary, format: GrammarFormat): Promise<CompiledGrammar> {
    const key = `${vocab.key}\u0000${JSON.stringify(format)}`;
    // Looked up at once (no await before a miss), so that two requests for one schema compile it once.
    const held = this.#grammars.has(key) ? await this.#live(key) : null;
    const entry = this.#grammars.get(key);
    if (held && entry) {
      // Most recently used: to the end of the map's order.
      this.#grammars.delete(key);
      this.#grammars.set(key, entry);
      if (!this.#warmed.delete(key)) this.#counters.hits++;
      return held;
    }
    // Gone, and compiled again by another request meanwhile: theirs.
    if (entry) return this.grammar(vocab, format);
    return this.#compile(key, vocab, format);
  }

  /**
   * The grammar held under `key` (a compile under way is awaited, and its failure thrown: a
   * request beside the one that compiles shares its outcome); null where none is, or where its
   * worker is gone (then it is dropped, to be compiled again).
   */
  async #live(key: string): Promise<CompiledGrammar | null> {
    const held = this.#grammars.get(key);
    if (!held) return null;
    const grammar = await held;
    if (!grammar.gone) return grammar;
    if (this.#grammars.get(key) === held) this.#grammars.delete(key);
    this.#warmed.delete(key);
    return null;
  }

  async #compile(key: string, vocab: TokenVocabulary, format: GrammarFormat): Promise<CompiledGrammar> {
    const started = performance.now();
    const compiling = this.backend.compile(vocab, format);
    this.#grammars.set(key, compiling);
    try {
      const grammar = await compiling;
      const ms = performance.now() - started;
      this.#counters.compiles++;
      this.#counters.compileMs += ms;
      this.#counters.lastCompileMs = ms;
      this.#evict();
      return grammar;
    } catch (e) {
      if (this.#grammars.get(key) === compiling) this.#grammars.delete(key);
      if (JevError.is(e) && e.code === 'schema_too_complex') this.#counters.tooComplex++;
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
      acceptFirst: async (candidates, jsonSafe) => {
        const token = await inner.acceptFirst(candidates, jsonSafe);
        if (token >= 0) this.#counters.takenFirst++;
        return token;
      },
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
    this.#warmed.clear();
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
