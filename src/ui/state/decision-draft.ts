import type { Signal } from '@preact/signals';
import { PRESETS } from './presets.ts';
import { fromQuestions, isDraftList, type QuestionDraft } from './question-draft.ts';
import { isBoolean, isString, storedSignal } from './stored-signal.ts';

/** What the decision builder holds, kept across reloads. */
export interface DecisionDraft {
  state: Signal<string>;
  questions: Signal<QuestionDraft[]>;
  calibrate: Signal<boolean>;
  /** The saved calibration profile the request applies (`calibration: id`), or '' for none. */
  profile: Signal<string>;
  /** The prediction set's alpha as typed ('' for no prediction set). */
  alpha: Signal<string>;
}

export function createDecisionDraft(): DecisionDraft {
  const first = PRESETS[0]!;
  return {
    state: storedSignal('decision.state', first.state, isString),
    questions: storedSignal('decision.questions', fromQuestions(first.questions), isDraftList),
    calibrate: storedSignal('decision.calibrate', false, isBoolean),
    profile: storedSignal('decision.profile', '', isString),
    alpha: storedSignal('decision.alpha', '', isString),
  };
}
