// Entry of the grammar worker in Node (a worker_threads Worker, src/engine/grammar/grammar-thread.ts):
// the same worker as grammar.worker.ts, over worker_threads' parentPort.
import { parentPort } from 'node:worker_threads';
import { serveGrammars } from '../src/engine/grammar/grammar-worker.ts';
import type { GrammarRequest } from '../src/engine/grammar/grammar-worker-protocol.ts';

const port = parentPort!;
serveGrammars({
  post: (reply, transfer = []) => port.postMessage(reply, transfer as ArrayBuffer[]),
  listen: (onRequest) => port.on('message', (request: GrammarRequest) => onRequest(request)),
});
