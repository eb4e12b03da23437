import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';

/** The bench worker's loaded engine and its language model (one at a time; `load` replaces them). */
export const loaded = {
  engine: null as Engine | null,
  lm: null as LanguageModel | null,
};

export function need(): LanguageModel {
  if (!loaded.lm) throw new Error('no model loaded');
  return loaded.lm;
}

export function needEngine(): Engine {
  if (!loaded.engine) throw new Error('no engine loaded');
  return loaded.engine;
}

let calls = 0;
/** A fresh call context for one engine request. */
export const call = () => ({ id: `bench-${++calls}` });
