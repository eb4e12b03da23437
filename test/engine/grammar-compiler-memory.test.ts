/**
 * xgrammar's compiler keeps every grammar it compiled in a cache of its own, with no bound
 * (`max_memory_bytes = -1` in 0.1.27, and the web binding cannot set one): a grammar the engine's
 * GrammarCache evicts and disposes would live on there, and a long-running engine's grammar
 * worker would grow until its memory bound refuses an innocent schema. The backend makes its
 * compilers without that cache (xgrammar-backend.ts); GrammarCache is the one cache. Measured
 * here as the growth of xgrammar's wasm heap over many distinct grammars, each disposed.
 */
import { describe, expect, it } from 'vitest';
import type { TokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { XGrammarBackend } from '../../src/engine/grammar/xgrammar-backend.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';
import { suiteSchemas } from '../../bench/lib/structured-compile-rows.ts';

// xgrammar's memory, taken from its instance as it starts (the only wasm this file's process runs: no model is loaded here).
let heap: WebAssembly.Memory | null = null;
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function (...args: Parameters<typeof WebAssembly.instantiate>) {
  const result = (await (instantiate as (...a: unknown[]) => Promise<unknown>)(...args)) as WebAssembly.WebAssemblyInstantiatedSource | WebAssembly.Instance;
  const instance = 'instance' in result ? result.instance : result;
  for (const value of Object.values(instance.exports)) if (value instanceof WebAssembly.Memory) heap = value;
  return result;
} as typeof WebAssembly.instantiate;
const heapBytes = () => heap?.buffer.byteLength ?? 0;

/** 48,000 tokens of 1-8 letters, digits and punctuation (raw), and a stop token: a grammar's compiled masks take room on it. */
function vocabulary(): TokenVocabulary {
  const random = seededRandom(57);
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_"{}[]@';
  const tokens = new Set<string>([...alphabet]);
  while (tokens.size < 48_000) {
    const length = 1 + Math.floor(random() * 8);
    tokens.add(Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''));
  }
  const encoded = [...tokens, ''];
  const width = encoded.length;
  return { key: 'memory-48k', encoded, vocabType: 'raw', prependSpace: false, width, stopTokenIds: [width - 1], jsonSafe: new Int32Array(Math.ceil(width / 32)).fill(-1) };
}

describe('the grammar compiler keeps no grammar the engine has disposed', () => {
  it('compiling 150 distinct grammars, each disposed, grows xgrammar\'s heap no more than the first 30 did', async () => {
    const backend = new XGrammarBackend();
    const vocab = vocabulary();
    // The JSON-Schema-Test-Suite's accepted group schemas: distinct grammars of every shape.
    const schemas = suiteSchemas();
    const compileDisposed = async (from: number, to: number) => {
      for (const { schema } of schemas.slice(from, to)) (await backend.compile(vocab, { type: 'json_schema', schema }).catch(() => null))?.dispose();
    };
    await compileDisposed(0, 30);
    const warm = heapBytes();
    expect(warm).toBeGreaterThan(0);
    await compileDisposed(30, 150);
    // Kept by xgrammar's cache, these 120 grammars grew the heap from 16 to 84 MiB on this vocabulary (2026-12-02).
    expect(heapBytes() - warm).toBeLessThanOrEqual(2 * 2 ** 20);
    backend.forget(vocab);
  }, 120_000);
});
