/**
 * The bench worker's extraction workloads (bench/lib/extraction-page-rows.ts): one request through
 * Engine.extract on the loaded model, timed here in the worker with performance.now(), and the
 * prefix cache cleared between requests, as the Node rows do through the facade.
 */
import type { ExtractionResponse } from '../../src/contract/index.ts';
import { call, needEngine } from './loaded-model.ts';
import { meters } from './meters.ts';

export const extractionWorkloads = {
  /** One extraction request (the wire body): its time in the worker, and the part of it inside transformers.js' model.forward (the passes). */
  async extractionTimed(body: unknown): Promise<{ ms: number; passMs: number; response: ExtractionResponse }> {
    const engine = needEngine();
    const m0 = meters.modelMs;
    const t0 = performance.now();
    const response = await engine.extract(body, call());
    return { ms: performance.now() - t0, passMs: meters.modelMs - m0, response };
  },

  /** Empties the engine's prefix cache, so that the next request starts cold. */
  async clearPrefixCache(): Promise<void> {
    await needEngine().clearCache();
  },
};
