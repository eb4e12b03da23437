// Entry of the engine's thread in Node (a worker_threads Worker, src/server/engine-thread.ts): the
// page's engine over Comlink on the thread's port, with the thread's host for the supervisor. Wiring only.
import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { InferenceSession } from 'onnxruntime-node';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { installErrorTransfer } from '../src/protocol/comlink-errors.ts';
import { threadEngine } from '../src/server/embedded-engine.ts';
import { installNodeRewrites } from '../src/server/node-session-rewrites.ts';
import type { EngineThreadData } from '../src/server/engine-thread.ts';
import { threadHost } from '../src/server/thread-host.ts';

installErrorTransfer();
const data = workerData as EngineThreadData;
// Logits for the rows read, and q4 on onnxruntime-node's int8 CPU kernels (server/node-session-rewrites.ts); none on CUDA.
installNodeRewrites(InferenceSession as never, data.device ?? 'cpu');
const port = parentPort!;
Comlink.expose(threadEngine(data, threadHost(port)), nodeEndpoint(port));
