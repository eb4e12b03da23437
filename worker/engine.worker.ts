/// <reference lib="webworker" />
// Entry of the engine's worker: wires the engine to Comlink, nothing else.
import * as Comlink from 'comlink';
import { Engine } from '../src/engine/engine.ts';
import { installErrorTransfer } from '../src/protocol/comlink-errors.ts';

installErrorTransfer();
// onnxruntime-web's files are emitted beside the worker's folder (ort/ next to assets/).
const ortBase = new URL('../ort/', import.meta.url).href;
Comlink.expose(new Engine({ runtime: { ortBase } }));
