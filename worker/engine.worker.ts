/// <reference lib="webworker" />
// Entry of the engine's worker: wires the engine to Comlink, nothing else.
import * as Comlink from 'comlink';
import { Engine } from '../src/engine/engine.ts';
import { installErrorTransfer } from '../src/protocol/comlink-errors.ts';

installErrorTransfer();
const ortBase = new URL(`${import.meta.env.BASE_URL}ort/`, self.location.origin).href;
Comlink.expose(new Engine({ runtime: { ortBase } }));
