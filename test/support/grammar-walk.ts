/**
 * A grammar as a validator, with no model: a character-level vocabulary (one token per
 * character: printable ASCII, the control characters, and whatever other characters a test
 * names), a real xgrammar matcher over a compiled grammar, and a text walked through it one
 * character at a time, then the stop token. `accepts` says whether the grammar takes the whole text.
 */
import type { CompiledGrammar, GrammarFormat } from '../../src/engine/grammar/backend.ts';
import type { TokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { XGrammarBackend } from '../../src/engine/grammar/xgrammar-backend.ts';

export class CharWalker {
  readonly chars: string[];
  readonly vocab: TokenVocabulary;
  readonly backend = new XGrammarBackend();
  readonly #grammars = new Map<string, Promise<CompiledGrammar>>();
  readonly #ids = new Map<string, number>();
  readonly stop: number;

  constructor(extra: Iterable<string> = []) {
    const set = new Set<string>();
    for (let c = 0; c < 0x80; c++) set.add(String.fromCharCode(c));
    for (const s of extra) for (const ch of s) set.add(ch);
    this.chars = [...set];
    this.chars.forEach((c, i) => this.#ids.set(c, i));
    this.stop = this.chars.length;
    const width = this.chars.length + 1;
    this.vocab = { key: `walk-${width}-${this.chars.join('').length}`, encoded: [...this.chars, ''], vocabType: 'raw', prependSpace: false, width, stopTokenIds: [this.stop], jsonSafe: new Int32Array(Math.ceil(width / 32)).fill(-1) };
  }

  /** Whether the grammar of `format` takes `text` whole (then the stop token); a character outside the vocabulary: false. */
  async accepts(format: GrammarFormat, text: string): Promise<boolean> {
    const matcher = await this.backend.matcher(await this.grammar(format));
    try {
      for (const ch of text) {
        const id = this.#ids.get(ch);
        if (id === undefined || !matcher.accept(id)) return false;
      }
      return matcher.accept(this.stop) && matcher.isTerminated();
    } finally {
      matcher.dispose();
    }
  }

  /** The compiled grammar of `format` (compiled once per walker); a refusal is thrown. */
  grammar(format: GrammarFormat): Promise<CompiledGrammar> {
    const key = JSON.stringify(format);
    let g = this.#grammars.get(key);
    if (!g) {
      g = this.backend.compile(this.vocab, format);
      this.#grammars.set(key, g);
    }
    return g;
  }

  clear(): void {
    for (const g of this.#grammars.values()) void g.then((x) => x.dispose(), () => undefined);
    this.#grammars.clear();
  }
}
