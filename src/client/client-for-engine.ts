import type { AdmissionOptions } from '../facade/admission.ts';
import { engineClient, type EngineBinding } from '../facade/engine-client.ts';
import type { JevClient } from '../facade/jev-client.ts';
import type { DecisionPolicy } from '../facade/openai-decisions.ts';
import type { LoadEvent, LoadOptions } from '../protocol/engine-api.ts';
import { fetchFunction } from '../http/fetch-function.ts';
import { createHttpHandler, type HttpOptions } from '../http/http-handler.ts';

/**
 * The client over an engine, in this thread or behind a worker, with its HTTP surface:
 * `client.fetch` answers the specification's paths through http/'s handler, over the client's
 * own methods (so a request through fetch and the same call as a method take one path).
 */
export function clientForEngine(
  binding: EngineBinding,
  initial: LoadOptions,
  onProgress?: (event: LoadEvent) => void,
  http: HttpOptions = {},
  limits: AdmissionOptions = {},
  policy: DecisionPolicy = {},
): JevClient {
  return engineClient(binding, initial, (surface) => fetchFunction(createHttpHandler(surface, http)), onProgress, limits, policy);
}
