import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Engine, type EngineConfig } from '../../src/engine/engine.ts';
import { createLocalClient } from '../../src/client/local-client.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import type { HttpOptions } from '../../src/http/http-handler.ts';
import type { AdmissionOptions } from '../../src/facade/admission.ts';

/** A client over an in-process engine (onnxruntime-node) on a model from a local hub-layout folder; `config` overrides the engine's. */
export async function localClient(
  root: string,
  model: string,
  http: HttpOptions = {},
  limits: AdmissionOptions = {},
  config: Partial<EngineConfig> = {},
): Promise<{ client: JevClient; engine: Engine }> {
  const engine = new Engine({
    ...config,
    runtime: { localModelPath: root },
    isNode: true,
    source: () => ({ has: async (file) => existsSync(join(root, model, 'onnx', file)) }),
  });
  const client = createLocalClient(engine, { model, host: 'http://unused.invalid', device: 'auto', dtype: 'fp32' }, http, limits);
  await client.ready;
  return { client, engine };
}
