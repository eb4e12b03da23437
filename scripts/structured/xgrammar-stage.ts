/**
 * The third check: a schema both checks accept (schema-verdict.ts) compiled as a request compiles
 * it, by the engine's own grammar backend (the grammar worker: our EBNF lowering, then xgrammar's
 * `compileGrammar`, under the 10 s compile bound and the 1 GiB memory bound) for a real
 * tokenizer's vocabulary: the generated SmolLM2-shaped model's (49,152 tokens), as
 * bench/lib/structured-compile-rows.ts measures compile time. The grammar cache is bypassed (each
 * schema one cold compile, even a schema seen twice), and each grammar is disposed once compiled.
 *
 * An accepted schema that does not compile is a defect: at request time it is a 400 from
 * xgrammar (`schemaCompile`: an EBNF xgrammar will not take), a 422 `schema_too_complex` (a
 * bound), or a 5xx (anything else).
 */
import { JevError, type JsonSchema } from '../../src/contract/index.ts';
import { stopTokenIds } from '../../src/engine/chat/stop-tokens.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { GrammarBackend } from '../../src/engine/grammar/backend.ts';
import type { TokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { GENERATED, loadEngine } from '../../test/support/models.ts';
import { ensureModel } from '../models/generate-models.ts';

export const XGRAMMAR_MODEL = 'smollm2-135m-random';

export type CompileOutcome =
  | { ok: true; ms: number }
  /** `kind`: `xgrammar` (400 schemaCompile), `bound` (422 schema_too_complex), `other` (any other error). */
  | { ok: false; ms: number; kind: 'xgrammar' | 'bound' | 'other'; status: number | null; message: string };

export class XGrammarStage {
  private constructor(
    private readonly engine: Engine,
    private readonly backend: GrammarBackend,
    private readonly vocab: TokenVocabulary,
  ) {}

  /** Loads the model's engine and pays xgrammar's start and the vocabulary's tables with one small schema. */
  static async open(): Promise<XGrammarStage> {
    await ensureModel(XGRAMMAR_MODEL, GENERATED);
    const engine = await loadEngine(GENERATED, XGRAMMAR_MODEL, 'fp32', { prefixCacheBytes: 0 });
    const lm = engine.languageModel!;
    const vocab = engine.grammars.vocabulary(lm, stopTokenIds(lm));
    const stage = new XGrammarStage(engine, engine.grammars.backend, vocab);
    const warm = await stage.compile({ type: 'object', properties: { warm: { type: 'boolean' } } });
    if (!warm.ok) throw new Error(`the warm-up schema did not compile: ${warm.message}`);
    return stage;
  }

  get vocabularySize(): number {
    return this.vocab.encoded.length;
  }

  /** One cold compile of `schema` as a response format. */
  async compile(schema: JsonSchema): Promise<CompileOutcome> {
    const started = performance.now();
    const ms = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      const grammar = await this.backend.compile(this.vocab, { type: 'json_schema', schema });
      const took = ms();
      grammar.dispose();
      return { ok: true, ms: took };
    } catch (e) {
      const took = ms();
      if (JevError.is(e)) {
        const kind = e.code === 'schema_too_complex' ? 'bound' : e.message.includes('could not be compiled into a grammar') ? 'xgrammar' : 'other';
        return { ok: false, ms: took, kind, status: e.status, message: e.message };
      }
      return { ok: false, ms: took, kind: 'other', status: null, message: String((e as Error)?.message ?? e) };
    }
  }

  async close(): Promise<void> {
    await this.engine.languageModel?.dispose();
    (this.backend as { close?: () => void }).close?.();
  }
}
