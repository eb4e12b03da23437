import { parseParam } from '../shared/parse-param.ts';
import type { ErrorInfo } from '../state/error-info.ts';
import type { DraftProblem, QuestionDraft } from '../state/question-draft.ts';
import type { QuestionErrors } from './question-editor.tsx';

/** Where each error of a decision shows: beside the state, inside a question, or on the form. */
export interface DecisionErrors {
  state?: string | undefined;
  form?: string | undefined;
  /** About the applied calibration profile (`calibration`). */
  profile?: string | undefined;
  /** About the prediction set (`prediction_set`, its alpha or its profile). */
  alpha?: string | undefined;
  questions: Record<string, QuestionErrors>;
}

export const noErrors: DecisionErrors = { questions: {} };

export function fromProblems(problems: readonly DraftProblem[]): DecisionErrors {
  const questions: Record<string, QuestionErrors> = {};
  for (const p of problems) questions[p.draftId] = { ...questions[p.draftId], [p.field]: p.message };
  return { questions };
}

/** Places an engine error by its `param`, e.g. `questions.team.criteria` → that question's options. */
export function placeError(info: ErrorInfo, drafts: readonly QuestionDraft[]): DecisionErrors {
  const path = parseParam(info.param);
  const message = info.message;
  if (path[0] === 'state') return { state: message, questions: {} };
  if (path[0] === 'calibration') return { profile: message, questions: {} };
  if (path[0] === 'prediction_set') return { alpha: message, questions: {} };
  if (path[0] === 'questions' && typeof path[1] === 'string') {
    const key = path[1];
    const draft = drafts.find((d) => d.key.trim() === key);
    if (draft) {
      const part = path[2];
      const where: keyof QuestionErrors =
        part === 'type' || part === 'instructions' || part === 'criteria' ? part : 'other';
      return { questions: { [draft.id]: { [where]: message } } };
    }
  }
  return { form: message, questions: {} };
}
