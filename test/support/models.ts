import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Engine, type EngineConfig } from '../../src/engine/engine.ts';
import type { Dtype } from '../../src/engine/model/language-model.ts';

import { GENERATED, TINYSTORIES, VENDORED } from '../../scripts/models/roots.ts';

export { GENERATED, REPO, TINYSTORIES, VENDORED } from '../../scripts/models/roots.ts';
export const TINY = 'tiny-random-llama';

/** Models the engine tests run on: the generated one and TinyStories (shipped in vendor/models). */
export function testModels(): { id: string; root: string; present: boolean }[] {
  return [
    { id: TINY, root: GENERATED, present: existsSync(join(GENERATED, TINY, 'onnx', 'model.onnx')) },
    { id: TINYSTORIES, root: VENDORED, present: existsSync(join(VENDORED, TINYSTORIES, 'onnx', 'model.onnx')) },
  ];
}

export function skipMessage(id: string, root: string): string {
  return `${id} is not at ${root}: run \`npm run models\` (generated models) or restore vendor/models from git.`;
}

/**
 * An in-process engine (onnxruntime-node) over a local folder of models in the hub layout.
 * `config` overrides the engine's (`{ prefixCacheBytes: 0 }`: every request starts cold, for tests
 * that measure one request's own work or arithmetic exactly).
 */
export async function loadEngine(root: string, model: string, dtype: Dtype = 'fp32', config: Partial<EngineConfig> = {}): Promise<Engine> {
  const engine = new Engine({
    ...config,
    runtime: { localModelPath: root },
    isNode: true,
    source: () => ({ has: async (file) => existsSync(join(root, model, 'onnx', file)) }),
  });
  await engine.load({ model, host: 'http://unused.invalid', device: 'auto', dtype });
  return engine;
}

/** The tensors an engine's prefix cache holds: one per past key/value input for each cached prefix (all that is live between requests). */
export async function cachedTensors(engine: Engine): Promise<number> {
  return (await engine.status()).prefixCache.entries * engine.languageModel!.kvInputs.length;
}
