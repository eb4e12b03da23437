/**
 * The grammar backend the engine uses: xgrammar in grammar workers (grammar-worker.ts), off the
 * engine's thread, so that no compile holds the engine's requests or its watchdog, however long it
 * runs. xgrammar cannot serialize a compiled grammar, so a grammar lives in the worker that
 * compiled it, with the matchers over it; the engine asks that worker for each token's mask.
 *
 * - Bounds: a compile may run `compileMs` (from when its own work begins, after the worker has
 *   loaded xgrammar and the vocabulary's tables) and may grow the worker's wasm heap to
 *   `memoryBytes`. Past either, the worker is terminated (with the grammars it held) and the
 *   request answered 422 `schema_too_complex`, naming the schema's heaviest part (schema-weight.ts).
 *   A new worker starts when one is next needed.
 * - Workers: a compile runs on a worker with no compile and no matcher of its own (so that no
 *   reply being written waits on it, and a worker terminated at the bound takes no matcher with
 *   it), else on a new worker, up to `maxThreads`; past that it waits for one to be free.
 * - Masks: `fillNextTokenBitmask` sends the tokens accepted since the last fill and asks for the
 *   next mask; `accept` answers from the mask last filled (xgrammar's mask, ANDed with the
 *   vocabulary's: what the chat loop draws from), and `isTerminated` from the stop tokens taken.
 *   chat/constraint.ts asks for the next mask as soon as a token is accepted, so that the worker
 *   fills it while the model runs the next forward pass. `acceptFirst` sends them too, and the
 *   worker takes the first of the candidates its matcher accepts (a greedy step's best tokens).
 */
import { JevError, validationMessage } from '../../contract/index.ts';
import { maskAllows, type CompiledGrammar, type GrammarBackend, type GrammarFormat, type GrammarMatcher } from './backend.ts';
import type { GrammarReply, GrammarRequest, GrammarThread } from './grammar-worker-protocol.ts';
import { spawnGrammarThread } from './grammar-thread.ts';
import { heaviestPart } from './schema-weight.ts';
import type { TokenVocabulary } from './token-vocabulary.ts';

export interface GrammarLimits {
  /** How long one compile may run, in milliseconds (default DEFAULT_COMPILE_MS). */
  compileMs?: number;
  /** How large a grammar worker's wasm heap may grow, in bytes (default DEFAULT_MEMORY_BYTES). */
  memoryBytes?: number;
  /** How many grammar workers may run at once (default 3). */
  maxThreads?: number;
  /** Starts a worker (default: grammar-thread.ts). */
  spawn?: () => Promise<GrammarThread>;
}

/** 10 s: below the hang watchdog's 15 s (facade/hang-watchdog.ts), and 20× the p95 target of 500 ms. */
export const DEFAULT_COMPILE_MS = 10_000;
/** 1 GiB of wasm heap: xgrammar's own ceiling is 2 GiB; a 150k-token vocabulary's tables take ~100 MB. */
export const DEFAULT_MEMORY_BYTES = 1024 * 1024 * 1024;

type Pending = { resolve: (reply: GrammarReply & { type: 'ok' }) => void; reject: (e: unknown) => void; onCompiling?: () => void };

/** One grammar worker, as the engine sees it. */
class Thread {
  readonly pending = new Map<number, Pending>();
  readonly vocabs = new Set<string>();
  readonly grammars = new Set<WorkerGrammar>();
  /** The compile running here (settles when it ends, however it ends). */
  compiling: Promise<unknown> | null = null;
  matchers = 0;
  dead: string | null = null;
  constructor(readonly thread: GrammarThread) {}

  get free(): boolean {
    return this.dead === null && this.compiling === null && this.matchers === 0;
  }

  post(message: GrammarRequest): void {
    if (this.dead === null) this.thread.post(message);
  }

  /** Sends a request and waits for its answer. */
  ask(message: GrammarRequest & { id: number }, onCompiling?: () => void): Promise<GrammarReply & { type: 'ok' }> {
    if (this.dead !== null) return Promise.reject(lost(this.dead));
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.thread.hold?.(true);
      this.pending.set(message.id, { resolve, reject, ...(onCompiling ? { onCompiling } : {}) });
      this.thread.post(message);
    });
  }

  /** The request `id` answered: its waiter, no longer pending (null where none waits). */
  settle(id: number): Pending | null {
    const p = this.pending.get(id);
    if (!p) return null;
    this.pending.delete(id);
    if (this.pending.size === 0) this.thread.hold?.(false);
    return p;
  }

  end(reason: string): void {
    if (this.dead !== null) return;
    this.dead = reason;
    this.thread.terminate();
    for (const p of this.pending.values()) p.reject(lost(reason));
    this.pending.clear();
    for (const g of this.grammars) g.lost = true;
    this.grammars.clear();
  }
}

/** A grammar held by a worker. */
class WorkerGrammar implements CompiledGrammar {
  lost = false;
  #disposed = false;
  constructor(readonly key: string, readonly home: Thread, readonly id: number, readonly vocab: TokenVocabulary) {}
  /** Whether its worker is gone (terminated at another compile's bound): it must be compiled again. */
  get gone(): boolean {
    return this.lost || this.home.dead !== null;
  }
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.home.grammars.delete(this);
    this.home.post({ op: 'dispose-grammar', grammar: this.id });
  }
}

class WorkerMatcher implements GrammarMatcher {
  #accepted: number[] = [];
  /** The mask last filled; null once a token was accepted from it. */
  #last: Int32Array | null = null;
  #terminated = false;
  #disposed = false;
  constructor(
    readonly home: Thread,
    readonly id: number,
    readonly vocab: TokenVocabulary,
    readonly nextId: () => number,
    readonly onDispose: () => void,
  ) {}

  async fillNextTokenBitmask(mask: Int32Array, jsonSafe = true): Promise<void> {
    const accepted = this.#accepted;
    this.#accepted = [];
    const reply = await this.home.ask({ op: 'fill', id: this.nextId(), matcher: this.id, accepted, jsonSafe });
    mask.set(reply.mask!.subarray(0, mask.length));
    this.#last = reply.mask!;
  }

  async acceptFirst(candidates: readonly number[], jsonSafe = true): Promise<number> {
    if (this.#terminated) return -1;
    const accepted = this.#accepted;
    this.#accepted = [];
    this.#last = null;
    const reply = await this.home.ask({ op: 'accept-first', id: this.nextId(), matcher: this.id, accepted, candidates: [...candidates], jsonSafe });
    const token = reply.value;
    if (token >= 0 && this.vocab.stopTokenIds.includes(token)) this.#terminated = true;
    return token;
  }

  accept(token: number): boolean {
    if (!this.#last) throw new Error('a grammar worker matcher takes a token only from the mask it last filled');
    if (this.#terminated || !maskAllows(this.#last, token)) return false;
    this.#last = null;
    this.#accepted.push(token);
    if (this.vocab.stopTokenIds.includes(token)) this.#terminated = true;
    return true;
  }

  isTerminated(): boolean {
    return this.#terminated;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.home.post({ op: 'dispose-matcher', matcher: this.id });
    this.onDispose();
  }
}

export class WorkerGrammarBackend implements GrammarBackend {
  readonly name = 'xgrammar-worker';
  readonly compileMs: number;
  readonly memoryBytes: number;
  readonly maxThreads: number;
  readonly #spawn: () => Promise<GrammarThread>;
  readonly #threads: Thread[] = [];
  /** Compiles waiting for a free worker. */
  #waiting: (() => void)[] = [];
  #nextId = 1;
  /** Workers started, and those ended at a bound (counters for status and tests). */
  started = 0;
  retired = 0;

  constructor(limits: GrammarLimits = {}) {
    this.compileMs = limits.compileMs ?? DEFAULT_COMPILE_MS;
    this.memoryBytes = limits.memoryBytes ?? DEFAULT_MEMORY_BYTES;
    this.maxThreads = limits.maxThreads ?? 3;
    this.#spawn = limits.spawn ?? spawnGrammarThread;
  }

  /** Workers running now. */
  get threads(): number {
    return this.#threads.filter((t) => t.dead === null).length;
  }

  async compile(vocab: TokenVocabulary, format: GrammarFormat): Promise<CompiledGrammar> {
    const home = await this.#freeThread();
    let ended!: () => void;
    home.compiling = new Promise<void>((resolve) => (ended = resolve));
    try {
      if (!home.vocabs.has(vocab.key)) {
        home.post({ op: 'vocab', vocab });
        home.vocabs.add(vocab.key);
      }
      const id = this.#nextId++;
      return await new Promise<WorkerGrammar>((resolve, reject) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        // The bound starts when the compile's own work does (the worker has xgrammar and the vocabulary's tables).
        const onCompiling = () => {
          timer = setTimeout(() => {
            this.#retire(home, 'a compile ran past its time bound');
            reject(tooComplex(format, `its grammar took longer than ${this.compileMs} ms to compile`));
          }, this.compileMs);
        };
        home.ask({ op: 'compile', id, vocab: vocab.key, format }, onCompiling).then(
          (reply) => {
            clearTimeout(timer);
            const grammar = new WorkerGrammar(JSON.stringify(format), home, reply.value, vocab);
            home.grammars.add(grammar);
            resolve(grammar);
          },
          (e: unknown) => {
            clearTimeout(timer);
            if (JevError.is(e) && e.details?.['memory'] === true) {
              this.#retire(home, 'a compile reached its memory bound');
              reject(tooComplex(format, `its grammar needed more than ${Math.round(this.memoryBytes / 2 ** 20)} MiB of memory to compile`));
            } else reject(e);
          },
        );
      });
    } finally {
      home.compiling = null;
      ended();
      this.#wake();
    }
  }

  async matcher(grammar: CompiledGrammar): Promise<GrammarMatcher> {
    const g = grammar as WorkerGrammar;
    // A compile running on its worker: the matcher waits for it (it cannot be served meanwhile).
    await g.home.compiling;
    if (g.gone) throw new GrammarLost();
    const reply = await g.home.ask({ op: 'matcher', id: this.#nextId++, grammar: g.id });
    g.home.matchers++;
    return new WorkerMatcher(g.home, reply.value, g.vocab, () => this.#nextId++, () => {
      g.home.matchers--;
      this.#wake();
    });
  }

  forget(vocab: TokenVocabulary): void {
    for (const t of this.#threads) {
      if (!t.vocabs.delete(vocab.key)) continue;
      t.post({ op: 'forget', vocab: vocab.key });
    }
  }

  /** Ends every worker (the engine is going away, or tests are done). */
  close(): void {
    for (const t of this.#threads) t.end('closed');
    this.#threads.length = 0;
  }

  async #freeThread(): Promise<Thread> {
    for (;;) {
      for (let i = this.#threads.length - 1; i >= 0; i--) if (this.#threads[i]!.dead !== null) this.#threads.splice(i, 1);
      const free = this.#threads.find((t) => t.free);
      if (free) return free;
      if (this.#threads.length < this.maxThreads) return this.#start();
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  async #start(): Promise<Thread> {
    const placeholder = new Thread({ post() {}, listen() {}, terminate() {} });
    // Counted at once, so that two compiles do not both start a worker past the limit.
    placeholder.compiling = Promise.resolve();
    this.#threads.push(placeholder);
    let thread: GrammarThread;
    try {
      thread = await this.#spawn();
    } finally {
      this.#threads.splice(this.#threads.indexOf(placeholder), 1);
    }
    const t = new Thread(thread);
    thread.listen(
      (reply) => {
        if (reply.type === 'compiling') return t.pending.get(reply.id)?.onCompiling?.();
        const p = t.settle(reply.id);
        if (!p) return;
        if (reply.type === 'ok') p.resolve(reply);
        else {
          const error = JevError.fromJSON(reply.error as Parameters<typeof JevError.fromJSON>[0]);
          p.reject(reply.memory ? new JevError(error.code, error.message, { param: error.param, details: { memory: true } }) : error);
        }
      },
      (reason) => {
        t.end(reason);
        this.#wake();
      },
    );
    t.post({ op: 'limits', memoryBytes: this.memoryBytes });
    this.#threads.push(t);
    this.started++;
    return t;
  }

  /** Ends a worker at a bound: its grammars go with it (GrammarCache compiles them again when asked). */
  #retire(home: Thread, reason: string): void {
    home.end(reason);
    this.retired++;
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) w();
  }
}

/** A grammar whose worker was terminated (at another compile's bound): compile it again. */
export class GrammarLost extends Error {
  constructor() {
    super('the grammar worker that held this grammar was terminated');
  }
}

function lost(reason: string): Error {
  return new JevError('engine_error', `The grammar worker stopped: ${reason}.`, { param: null });
}

/**
 * The 422 of a compile stopped at a bound. `param` is the heaviest part of the format's schema,
 * below `response_format.json_schema.schema` or, for tool calls, below `calls[i]` or `answer`
 * (chat/ rewrites those to the request's own paths: `tools[k].function.parameters`).
 */
export function tooComplex(format: GrammarFormat, why: string): JevError {
  let param = 'response_format';
  if (format.type === 'json_schema') param = `response_format.json_schema.schema${heaviestPart(format.schema).path}`;
  else if (format.type === 'tool_calls') {
    const parts = format.calls.map((c, i) => ({ at: `calls[${i}]`, ...heaviestPart(c.parameters) }));
    if (format.answer) parts.push({ at: 'answer', ...heaviestPart(format.answer) });
    const heaviest = parts.reduce((a, b) => (b.weight > a.weight ? b : a));
    param = `${heaviest.at}${heaviest.path}`;
  }
  return new JevError('schema_too_complex', validationMessage('schemaTooComplex', param, [why]), { param, details: { why } });
}
