/// <reference lib="webworker" />
// Entry of the engine's worker: wires the engine to Comlink, nothing else.
import * as Comlink from 'comlink';
import { Engine } from '../src/engine/engine.ts';
import { installErrorTransfer } from '../src/protocol/comlink-errors.ts';
import { IntegrityCache } from '../src/engine/load/storage/integrity-cache.ts';
import { workerHost } from '../src/engine/worker-host.ts';

installErrorTransfer();
// onnxruntime-web's files are emitted beside the worker's folder (ort/ next to assets/).
const ortBase = new URL('../ort/', import.meta.url).href;
// The host: liveness lock, fault reports and crash drills, for the facade's supervisor.
Comlink.expose(new Engine({ runtime: { ortBase, modelCache: new IntegrityCache() }, host: workerHost(self as unknown as DedicatedWorkerGlobalScope) }));
