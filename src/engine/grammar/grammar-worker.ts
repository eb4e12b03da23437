/**
 * Inside a grammar worker: xgrammar (xgrammar-backend.ts), the grammars it compiled and the
 * matchers over them, by id, answering the engine's requests (grammar-worker-protocol.ts) one at
 * a time, in order. The engine terminates the worker when a compile outgrows its time bound
 * (worker-grammar-backend.ts); the memory bound is kept here: the wasm heap may not grow past
 * the cap (`limits`): a growth past it fails as an allocation failure inside xgrammar (emscripten's
 * `growMemory` reads a throwing `grow` as "no memory"), which aborts the compile, and the reply
 * says so (`memory`), so that the engine answers 422 and retires this worker.
 */
import { toJevError } from '../../contract/index.ts';
import type { CompiledGrammar, GrammarMatcher } from './backend.ts';
import type { GrammarPort, GrammarRequest } from './grammar-worker-protocol.ts';
import type { TokenVocabulary } from './token-vocabulary.ts';
import { XGrammarBackend } from './xgrammar-backend.ts';

const PAGE = 65_536;

/** Serves the engine's grammar requests on `port` (the worker's entry calls this once). */
export function serveGrammars(port: GrammarPort): void {
  const backend = new XGrammarBackend();
  const vocabs = new Map<string, TokenVocabulary>();
  /** By id, with the logits width of their vocabulary (a mask's bits). */
  const grammars = new Map<number, { grammar: CompiledGrammar; width: number }>();
  const matchers = new Map<number, { matcher: GrammarMatcher; width: number }>();
  let nextId = 1;
  let memoryBytes = Infinity;
  let capHit = false;
  let heap: WebAssembly.Memory | null = null;

  // The cap: every wasm memory of this worker is xgrammar's.
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function (this: WebAssembly.Memory, delta: number): number {
    heap = this;
    if (this.buffer.byteLength + delta * PAGE > memoryBytes) {
      capHit = true;
      throw new RangeError(`the grammar worker's wasm heap may not grow past ${memoryBytes} bytes`);
    }
    return grow.call(this, delta);
  };

  const handle = async (request: GrammarRequest): Promise<void> => {
    switch (request.op) {
      case 'limits':
        memoryBytes = request.memoryBytes;
        return;
      case 'vocab':
        vocabs.set(request.vocab.key, request.vocab);
        return;
      case 'forget': {
        const vocab = vocabs.get(request.vocab);
        vocabs.delete(request.vocab);
        if (vocab) backend.forget(vocab);
        return;
      }
      case 'dispose-grammar':
        grammars.get(request.grammar)?.grammar.dispose();
        grammars.delete(request.grammar);
        return;
      case 'dispose-matcher':
        matchers.get(request.matcher)?.matcher.dispose();
        matchers.delete(request.matcher);
        return;
      case 'compile': {
        const vocab = vocabs.get(request.vocab);
        if (!vocab) throw new Error(`the grammar worker has no vocabulary ${JSON.stringify(request.vocab)}`);
        capHit = false;
        try {
          const grammar = await backend.compile(vocab, request.format, () => port.post({ id: request.id, type: 'compiling' }));
          const id = nextId++;
          grammars.set(id, { grammar, width: vocab.width });
          port.post({ id: request.id, type: 'ok', value: id, heapBytes: heap?.buffer.byteLength ?? 0 });
        } catch (e) {
          port.post({ id: request.id, type: 'error', error: toJevError(e).toJSON(), ...(capHit ? { memory: true } : {}) });
        }
        return;
      }
      case 'matcher': {
        const held = grammars.get(request.grammar);
        if (!held) throw new Error(`the grammar worker has no grammar ${request.grammar}`);
        const id = nextId++;
        matchers.set(id, { matcher: await backend.matcher(held.grammar), width: held.width });
        port.post({ id: request.id, type: 'ok', value: id });
        return;
      }
      case 'fill': {
        const held = matchers.get(request.matcher);
        if (!held) throw new Error(`the grammar worker has no matcher ${request.matcher}`);
        const { matcher, width } = held;
        for (const token of request.accepted) {
          if (!matcher.accept(token)) throw new Error(`the grammar refused token ${token}, which its own mask allowed`);
        }
        const mask = new Int32Array(Math.ceil(width / 32));
        await matcher.fillNextTokenBitmask(mask, request.jsonSafe);
        port.post({ id: request.id, type: 'ok', value: 0, mask }, [mask.buffer]);
        return;
      }
      case 'accept-first': {
        const held = matchers.get(request.matcher);
        if (!held) throw new Error(`the grammar worker has no matcher ${request.matcher}`);
        for (const token of request.accepted) {
          if (!held.matcher.accept(token)) throw new Error(`the grammar refused token ${token}, which its own mask allowed`);
        }
        port.post({ id: request.id, type: 'ok', value: await held.matcher.acceptFirst(request.candidates, request.jsonSafe) });
        return;
      }
    }
  };

  // One request at a time, in order: a fill waits for the accepts before it, a compile for the fills.
  let tail = Promise.resolve();
  port.listen((request) => {
    tail = tail.then(() =>
      handle(request).catch((e: unknown) => {
        if ('id' in request) port.post({ id: request.id, type: 'error', error: toJevError(e).toJSON() });
      }),
    );
  });
}

