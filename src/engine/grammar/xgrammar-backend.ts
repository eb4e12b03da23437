/**
 * The grammar backend on @mlc-ai/web-xgrammar 0.1.27 (wasm, ~1 MB): loaded with a dynamic import
 * the first time a request needs it, so requests without a response format never pay for it.
 *
 * - Per vocabulary: one TokenizerInfo and one GrammarCompiler (xgrammar's own cache of rules kept).
 * - Compiling: a response schema is lowered by our own compiler (json-schema/compile.ts) into
 *   EBNF of one-line JSON (", " and ": " separators), with the length bounds its matchers keep
 *   (json-schema/length-guard.ts); a tool call's parameters likewise, inside an xgrammar
 *   structural tag; `json_object` is xgrammar's own converter.
 * - Masks: xgrammar's, ANDed with the vocabulary's `jsonSafe` mask (token-vocabulary.ts) and with
 *   the tokens that keep the reply's bytes well-formed UTF-8 from where they end (token-utf8.ts):
 *   xgrammar 0.1.27 lets ill-formed sequences (overlong forms, surrogates) into strings; then
 *   the length guards' (length-guard-tracker.ts), which `accept` checks too.
 * - Errors: xgrammar aborts (`RuntimeError: Aborted()`) on what it cannot compile, and writes the
 *   reason to the console; the reason is caught there and the request answered 400 at its schema.
 * - Every TokenizerInfo, compiler, compiled grammar and matcher is an embind handle, disposed once.
 */
import { formatParam, JevError, validationMessage, type JsonSchema, type PathSegment } from '../../contract/index.ts';
import type { CompiledGrammar, GrammarBackend, GrammarFormat, GrammarMatcher, ToolCallFormat } from './backend.ts';
import type { TokenVocabulary } from './token-vocabulary.ts';
import { schemaToEbnf, schemaToGrammar } from './json-schema/compile.ts';
import type { GuardScope, LengthGuard } from './json-schema/length-guard.ts';
import { LengthGuards, type GuardTracker } from './length-guard-tracker.ts';
import { SchemaRefusal } from './json-schema/refusal.ts';
import { tokenUtf8, UTF8_BOUNDARY, UTF8_INVALID, type TokenUtf8 } from './token-utf8.ts';

/** The parts of the package's API used here (its own .d.ts types them; the module is loaded late). */
interface Handle {
  dispose(): void;
}
interface XgTokenizerInfo extends Handle {}
interface XgCompiledGrammar extends Handle {}
interface XgMatcher extends Handle {
  acceptToken(id: number): boolean;
  getNextTokenBitmask(): Promise<Int32Array>;
  isTerminated(): boolean;
}
interface XgCompiler extends Handle {
  compileJSONSchema(schema: string, anyWhitespace?: boolean, indent?: number, separators?: [string, string], strictMode?: boolean): Promise<XgCompiledGrammar>;
  compileGrammar(grammar: Handle | string, rootRule?: string): Promise<XgCompiledGrammar>;
}
interface XGrammar {
  TokenizerInfo: { createTokenizerInfo(vocab: string[], vocabType: string, prependSpace: boolean, vocabSize: number, stopTokenIds: number[]): Promise<XgTokenizerInfo> };
  GrammarCompiler: { createGrammarCompiler(info: XgTokenizerInfo, cacheEnabled?: boolean): Promise<XgCompiler> };
  GrammarMatcher: { createGrammarMatcher(grammar: XgCompiledGrammar): Promise<XgMatcher> };
  Grammar: { builtinJSONGrammar(): Promise<Handle>; fromStructuralTag(structuralTag: object): Promise<Handle> };
  Testings: { _jsonSchemaToEBNF(schema: string, anyWhitespace?: boolean, indent?: number, separators?: [string, string], strictMode?: boolean): Promise<string> };
}

let loading: Promise<XGrammar> | null = null;
/** Lines xgrammar writes to the console while a compile runs (its reasons for aborting). */
let capture: string[] | null = null;

/** Loads the package once; console.error is wrapped first, because the wasm binds it when it starts. */
export function loadXGrammar(): Promise<XGrammar> {
  loading ??= (async () => {
    const original = console.error.bind(console);
    console.error = (...args: unknown[]) => {
      if (capture) capture.push(args.map(String).join(' '));
      else original(...args);
    };
    const unshim = await nodeShims();
    try {
      const ns = (await import('@mlc-ai/web-xgrammar')) as unknown as { default?: Partial<XGrammar>; GrammarCompiler?: unknown };
      // The package is a UMD bundle: a bundler's interop gives its exports as `default`; a plain
      // evaluation leaves them on globalThis.xgrammar.
      const xg = (ns.default?.GrammarCompiler ? ns.default : ns.GrammarCompiler ? ns : (globalThis as { xgrammar?: unknown }).xgrammar) as XGrammar | undefined;
      if (!xg?.GrammarCompiler) throw new Error('@mlc-ai/web-xgrammar did not load');
      (await xg.Grammar.builtinJSONGrammar()).dispose(); // starts the wasm now, not inside a request's first compile
      return xg;
    } finally {
      unshim();
    }
  })();
  loading.catch(() => (loading = null));
  return loading;
}

/**
 * In plain Node ESM (tsx, a server), the package's emscripten prelude reads `require` and
 * `__filename`, which ESM lacks: they are lent on globalThis until its wasm has started. Browsers,
 * workers and Vite-transformed modules (vitest) need nothing.
 */
async function nodeShims(): Promise<() => void> {
  const g = globalThis as Record<string, unknown> & { process?: { versions?: { node?: string } } };
  if (typeof g.process?.versions?.node !== 'string' || 'document' in g || 'location' in g) return () => {};
  const added: string[] = [];
  if (!('require' in g) || !('__filename' in g)) {
    const specifier = 'node:module'; // not a literal: bundlers leave it alone
    const { createRequire } = (await import(/* @vite-ignore */ specifier)) as { createRequire(url: string): ((id: string) => unknown) & { resolve(id: string): string } };
    const urlSpecifier = 'node:url';
    const { fileURLToPath } = (await import(/* @vite-ignore */ urlSpecifier)) as { fileURLToPath(url: string): string };
    const require = createRequire(import.meta.url);
    if (!('require' in g)) (g['require'] = require), added.push('require');
    if (!('__filename' in g)) (g['__filename'] = packageFile(require, fileURLToPath)), added.push('__filename');
  }
  return () => {
    for (const k of added) delete g[k];
  };
}

/** The package's file (the emscripten prelude's base for its paths); in a bundle holding it (the built server's grammar thread), that bundle. */
function packageFile(require: { resolve(id: string): string }, fileURLToPath: (url: string) => string): string {
  try {
    return require.resolve('@mlc-ai/web-xgrammar');
  } catch {
    return fileURLToPath(import.meta.url);
  }
}

class XgCompiled implements CompiledGrammar {
  #disposed = false;
  /** The length bounds its matchers keep (json-schema/length-guard.ts); null: none. */
  readonly guards: LengthGuards | null;
  constructor(readonly key: string, readonly handle: XgCompiledGrammar, readonly vocab: TokenVocabulary, scopes: readonly GuardScope[] = []) {
    this.guards = scopes.some((s) => s.guards.length > 0) ? new LengthGuards(scopes, vocab) : null;
  }
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.handle.dispose();
  }
}

class XgGrammarMatcher implements GrammarMatcher {
  #disposed = false;
  readonly #utf8: TokenUtf8;
  /** Where the accepted tokens' bytes end: between characters, or inside one (token-utf8.ts). */
  #utf8State = UTF8_BOUNDARY;
  /** Where the reply stands for its length guards (length-guard-tracker.ts). */
  readonly #tracker: GuardTracker | null;
  constructor(private readonly handle: XgMatcher, private readonly vocab: TokenVocabulary, private readonly guards: LengthGuards | null) {
    this.#utf8 = tokenUtf8(vocab);
    this.#tracker = guards?.start() ?? null;
  }

  async fillNextTokenBitmask(mask: Int32Array, jsonSafe = true): Promise<void> {
    const next = await this.handle.getNextTokenBitmask();
    const wellFormed = this.#utf8.mask(this.#utf8State);
    if (!jsonSafe) {
      for (let i = 0; i < mask.length; i++) mask[i] = (next[i] ?? 0) & wellFormed[i]!;
    } else {
      const safe = this.vocab.jsonSafe;
      for (let i = 0; i < mask.length; i++) mask[i] = (next[i] ?? 0) & safe[i]! & wellFormed[i]!;
    }
    if (this.guards) this.guards.filter(mask, this.#tracker!);
  }

  async acceptFirst(candidates: readonly number[], jsonSafe = true): Promise<number> {
    const safe = this.vocab.jsonSafe;
    const { encoded, stopTokenIds } = this.vocab;
    for (const token of candidates) {
      if (!Number.isInteger(token) || token < 0 || token >= this.vocab.width) continue;
      if (jsonSafe && ((safe[token >> 5]! >>> (token & 31)) & 1) === 0) continue;
      // A blank token (special, or a hole) that is not a stop token: never in a mask, and xgrammar warns on the console at each.
      if (encoded[token] === '' && !stopTokenIds.includes(token)) continue;
      if (this.accept(token)) return token;
    }
    return -1;
  }

  accept(token: number): boolean {
    const state = this.#utf8.after(this.#utf8State, token);
    if (state === UTF8_INVALID) return false;
    if (this.guards && !this.guards.allows(this.#tracker!, token)) return false;
    if (!this.handle.acceptToken(token)) return false;
    this.#utf8State = state;
    if (this.guards) this.guards.advance(this.#tracker!, token);
    return true;
  }

  isTerminated(): boolean {
    return this.handle.isTerminated();
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.handle.dispose();
  }
}

/**
 * A tool-call format as xgrammar's structural tag: each call a tag whose content is the tool's
 * parameters as an EBNF grammar of one-line JSON (the same settings as a response schema: no
 * free whitespace, strict). xgrammar's own `json_schema` content allows any whitespace, which a
 * random model never ends; its EBNF conversion is exported under `Testings` in 0.1.27.
 *
 * The calls' length guards start at each call's begin (a begin is written only to open its call:
 * in free text, a trigger commits to a call). Where the reply may instead be the answer's JSON,
 * which could hold a begin's text as its own, every bound stays in the grammar.
 */
function structuralTag(format: ToolCallFormat): { tag: object; scopes: GuardScope[] } {
  const guarded = format.answer === null;
  const scopes: GuardScope[] = [];
  const tags = format.calls.map((call) => {
    const { ebnf, guards } = schemaEbnf(call.parameters, ['tools'], guarded);
    scopes.push({ begin: call.begin, guards });
    return { type: 'tag', begin: call.begin, content: { type: 'grammar', grammar: ebnf }, end: call.end };
  });
  const calls = { type: 'tags_with_separator', tags, separator: format.separator, at_least_one: true, stop_after_first: format.single };
  let top: object;
  if (format.forced) top = calls;
  // xgrammar 0.1.27 refuses a list of calls inside an `or`: with an answer, one call or the answer.
  else if (format.answer) top = { type: 'or', elements: [...tags, { type: 'grammar', grammar: schemaEbnf(format.answer, ['tools'], false).ebnf }] };
  else top = { type: 'triggered_tags', triggers: format.triggers, tags, at_least_one: false, stop_after_first: format.single };
  return { tag: { type: 'structural_tag', format: top }, scopes };
}

/** The cache's key of a grammar and the guards its matchers keep. */
function keyOf(grammar: string, scopes: readonly GuardScope[]): string {
  const guards = scopes.filter((s) => s.guards.length > 0).map((s) => [s.begin, s.guards.map((g) => [g.places, g.max])]);
  return guards.length ? `${grammar}\n${JSON.stringify(guards)}` : grammar;
}

/**
 * The EBNF of a schema (json-schema/compile.ts), with the length bounds its matchers keep where
 * `guarded` (a response format's; a tool call's JSON sits among tags its matcher does not read);
 * what it refuses is a 400 at the keyword, under `base`.
 */
function schemaEbnf(schema: JsonSchema, base: PathSegment[], guarded: boolean): { ebnf: string; guards: LengthGuard[] } {
  try {
    return guarded ? schemaToGrammar(schema) : { ebnf: schemaToEbnf(schema), guards: [] };
  } catch (e) {
    if (!(e instanceof SchemaRefusal)) throw e;
    const param = formatParam([...base, ...(base[0] === 'tools' ? [] : e.path)])!;
    const keyword = String([...base, ...e.path].filter((p) => typeof p === 'string').pop());
    throw new JevError('invalid_request', validationMessage('schemaKeywordRefused', param, [keyword, e.reason]), { param, cause: e });
  }
}

export class XGrammarBackend implements GrammarBackend {
  readonly name = 'xgrammar';
  readonly #compilers = new Map<TokenVocabulary, Promise<{ info: XgTokenizerInfo; compiler: XgCompiler }>>();

  /** `started`: called once xgrammar and the vocabulary's tables are ready, as the compile's own work begins (its time bound, worker-grammar-backend.ts). */
  async compile(vocab: TokenVocabulary, format: GrammarFormat, started?: () => void): Promise<CompiledGrammar> {
    const xg = await loadXGrammar();
    const { compiler } = await this.#compilerFor(xg, vocab);
    started?.();
    capture = [];
    try {
      if (format.type === 'tool_calls') {
        const { tag, scopes } = structuralTag(format);
        const grammar = await xg.Grammar.fromStructuralTag(tag);
        try {
          return new XgCompiled(keyOf(JSON.stringify(tag), scopes), await compiler.compileGrammar(grammar), vocab, scopes);
        } finally {
          grammar.dispose();
        }
      }
      if (format.type === 'json_schema') {
        // Our own lowering (json-schema/compile.ts): xgrammar's converter lets invalid output through.
        const { ebnf, guards } = schemaEbnf(format.schema, ['response_format', 'json_schema', 'schema'], true);
        const scopes = [{ begin: null, guards }];
        return new XgCompiled(keyOf(ebnf, scopes), await compiler.compileGrammar(ebnf), vocab, scopes);
      }
      const text = JSON.stringify({ type: 'object' });
      const handle = await compiler.compileJSONSchema(text, false, -1, undefined, true);
      return new XgCompiled(text, handle, vocab);
    } catch (e) {
      if (e instanceof JevError) throw e;
      const reason = capture.find((line) => line.includes('[FATAL]'))?.replace(/^.*?\[FATAL\]\s*\S+\s*/, '') ?? String((e as Error)?.message ?? e);
      const param = format.type === 'json_schema' ? 'response_format.json_schema.schema' : format.type === 'tool_calls' ? 'tools' : 'response_format';
      throw new JevError('invalid_request', validationMessage('schemaCompile', param, [reason.trim()]), { param, cause: e });
    } finally {
      capture = null;
    }
  }

  async matcher(grammar: CompiledGrammar): Promise<GrammarMatcher> {
    const xg = await loadXGrammar();
    const compiled = grammar as XgCompiled;
    return new XgGrammarMatcher(await xg.GrammarMatcher.createGrammarMatcher(compiled.handle), compiled.vocab, compiled.guards);
  }

  forget(vocab: TokenVocabulary): void {
    const entry = this.#compilers.get(vocab);
    this.#compilers.delete(vocab);
    void entry?.then(({ info, compiler }) => {
      compiler.dispose();
      info.dispose();
    }, () => undefined);
  }

  #compilerFor(xg: XGrammar, vocab: TokenVocabulary): Promise<{ info: XgTokenizerInfo; compiler: XgCompiler }> {
    let entry = this.#compilers.get(vocab);
    if (!entry) {
      entry = (async () => {
        const info = await xg.TokenizerInfo.createTokenizerInfo([...vocab.encoded], vocab.vocabType, vocab.prependSpace, vocab.width, [...vocab.stopTokenIds]);
        // Without xgrammar's own cache: it keeps every grammar compiled, with no bound (0.1.27's
        // max_memory_bytes is -1, and the web binding cannot set it), so that a grammar GrammarCache
        // evicted and disposed would stay in memory (test/engine/grammar-compiler-memory.test.ts).
        return { info, compiler: await xg.GrammarCompiler.createGrammarCompiler(info, false) };
      })();
      entry.catch(() => this.#compilers.delete(vocab));
      this.#compilers.set(vocab, entry);
    }
    return entry;
  }
}
