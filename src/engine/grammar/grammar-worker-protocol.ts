/**
 * The wire between the engine and a grammar worker (grammar-worker.ts): requests carry an `id`
 * and are answered in the order they were sent (the worker runs one at a time); a compile also
 * sends `compiling` when its own work begins (after the worker has loaded xgrammar and built the
 * vocabulary's tables), which is when the compile's time bound starts.
 */
import type { GrammarFormat } from './backend.ts';
import type { TokenVocabulary } from './token-vocabulary.ts';

export type GrammarRequest =
  /** The cap on the worker's wasm heap, in bytes (sent first). */
  | { op: 'limits'; memoryBytes: number }
  /** A vocabulary, sent once per worker before the first compile for it; no answer. */
  | { op: 'vocab'; vocab: TokenVocabulary }
  | { op: 'compile'; id: number; vocab: string; format: GrammarFormat }
  | { op: 'matcher'; id: number; grammar: number }
  /** Takes the tokens accepted since the last fill, then fills the next mask. */
  | { op: 'fill'; id: number; matcher: number; accepted: number[]; jsonSafe: boolean }
  /** Takes the tokens accepted since the last fill, then the first of `candidates` the next mask allows (its id, or -1). */
  | { op: 'accept-first'; id: number; matcher: number; accepted: number[]; candidates: number[]; jsonSafe: boolean }
  | { op: 'dispose-grammar'; grammar: number }
  | { op: 'dispose-matcher'; matcher: number }
  | { op: 'forget'; vocab: string };

export type GrammarReply =
  | { id: number; type: 'compiling' }
  /** compile: the grammar's id and the wasm heap after it; matcher: the matcher's id; fill: the mask (transferred); accept-first: the token taken, or -1. */
  | { id: number; type: 'ok'; value: number; heapBytes?: number; mask?: Int32Array }
  /** `error`: a JevError's JSON; `memory`: the compile was stopped at the memory cap. */
  | { id: number; type: 'error'; error: unknown; memory?: boolean };

/** What the engine side needs of a worker, in the browser (Worker) and in Node (worker_threads). */
export interface GrammarThread {
  post(message: GrammarRequest): void;
  /** Sets the listener of replies, and of the worker's death (an error, or an exit the engine did not ask for). */
  listen(onReply: (reply: GrammarReply) => void, onDeath: (reason: string) => void): void;
  /**
   * Whether the engine waits on a reply of this worker: in Node a worker keeps the process alive
   * only then (an idle one does not: grammar-thread.ts). The browser's workers need nothing.
   */
  hold?(waiting: boolean): void;
  terminate(): void;
}

/** The other end, as the worker sees its parent. */
export interface GrammarPort {
  post(reply: GrammarReply, transfer?: Transferable[]): void;
  listen(onRequest: (request: GrammarRequest) => void): void;
}
