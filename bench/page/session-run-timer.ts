import type { LanguageModel } from '../../src/engine/model/language-model.ts';

/**
 * Wraps the decoder session's `run` (onnxruntime-web: copying inputs in, the graph, outputs out)
 * so that each call reports its milliseconds to `onRun`: a decode step's wall time minus the sum
 * is its time outside the graph. Shared by the bench's worker (page/bench.worker.ts) and the
 * peers' engine worker (peers/page/engine.worker.ts), so that both split a step the same way.
 */
export function timeRuns(m: LanguageModel, onRun: (ms: number) => void): void {
  const sessions = (m.model as unknown as { sessions: Record<string, { run(...a: unknown[]): Promise<unknown> }> }).sessions;
  const session = sessions['model'] ?? sessions['decoder_model_merged'];
  if (!session) return;
  const run = session.run.bind(session);
  session.run = async (...args: unknown[]) => {
    const t0 = performance.now();
    try {
      return await run(...args);
    } finally {
      onRun(performance.now() - t0);
    }
  };
}
