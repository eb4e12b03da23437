/// <reference lib="webworker" />
// Entry of the grammar worker, spawned by the engine's worker (src/engine/grammar/grammar-thread.ts):
// xgrammar's compiles and matchers, off the engine's thread (src/engine/grammar/grammar-worker.ts).
import { serveGrammars } from '../src/engine/grammar/grammar-worker.ts';

const scope = self as unknown as DedicatedWorkerGlobalScope;
serveGrammars({
  post: (reply, transfer = []) => scope.postMessage(reply, transfer),
  listen: (onRequest) => scope.addEventListener('message', (event: MessageEvent) => onRequest(event.data)),
});
