import type { EngineApi, LoadOptions } from '../protocol/engine-api.ts';
import type { HttpOptions } from '../http/http-handler.ts';
import type { AdmissionOptions } from '../facade/admission.ts';
import type { JevClient } from '../facade/jev-client.ts';
import type { DecisionPolicy } from '../facade/openai-decisions.ts';
import { clientForEngine } from './client-for-engine.ts';

/** A client over an engine in this very thread (Node, tests, or a page that hosts no worker). */
export function createLocalClient(engine: EngineApi, load: LoadOptions, http: HttpOptions = {}, limits: AdmissionOptions = {}, policy: DecisionPolicy = {}): JevClient {
  return clientForEngine({ api: engine, wrapCallback: (fn) => fn, terminate: () => {} }, load, undefined, http, limits, policy);
}
