import type { Tensor } from '@huggingface/transformers';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { timeRuns } from './session-run-timer.ts';

/** What the bench worker's instruments have counted on the loaded model, summed since it loaded. */
export const meters = {
  /** Time spent inside LanguageModel.forward (the onnxruntime run and its tensor copies). */
  forwardMs: 0,
  /** When set, each forward pass appends [tokens fed, past length, ms]. */
  trace: null as [number, number, number][] | null,
  /** Time inside transformers.js' model.forward (the onnxruntime run), for engine and baselines alike. */
  modelMs: 0,
  /** The largest logits (bytes) model.forward returned since the last `takeLogitsPeak`. */
  logitsPeak: 0,
  /** Time inside the decoder session's `run` (session-run-timer.ts). */
  runMs: 0,
};

function timeForwards(m: LanguageModel): void {
  const forward = m.forward.bind(m);
  m.forward = async (...args: Parameters<LanguageModel['forward']>) => {
    const t0 = performance.now();
    try {
      return await forward(...args);
    } finally {
      const dt = performance.now() - t0;
      meters.forwardMs += dt;
      meters.trace?.push([args[0].length, args[1].length, Math.round(dt)]);
    }
  };
}

function timeModel(m: LanguageModel): void {
  const model = m.model as unknown as { forward(inputs: unknown): Promise<unknown> };
  const forward = model.forward.bind(model);
  model.forward = async (inputs: unknown) => {
    const t0 = performance.now();
    try {
      const out = (await forward(inputs)) as { logits?: Tensor };
      if (out.logits) meters.logitsPeak = Math.max(meters.logitsPeak, out.logits.size * (out.logits.type === 'float16' ? 2 : 4));
      return out;
    } finally {
      meters.modelMs += performance.now() - t0;
    }
  };
}

/** Instruments a freshly loaded model: LanguageModel.forward, transformers.js' model.forward, the session's run. */
export function instrument(m: LanguageModel): void {
  timeForwards(m);
  timeModel(m);
  timeRuns(m, (ms) => (meters.runMs += ms));
}
