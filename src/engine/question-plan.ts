import type { Question } from '../contract/index.ts';
import { questionBlock, type LabelSurface, type PromptFrame } from './decision-prompt.ts';
import type { LanguageModel } from './language-model.ts';
import { planLabelScoring, type LabelScoringPlan } from './label-scoring.ts';

/**
 * The token-level plan of one question: the tokens fed after the state, and each answer
 * label's token path after them.
 *
 * Labels are tokenized in context (question text + label encoded together), so each label is
 * scored as the tokens the model would really write. The prompt is the longest token prefix that
 * all labels share, so answer paths start where they diverge (every path keeps at least one token).
 */
export interface QuestionPlan {
  promptIds: number[];
  labels: LabelSurface[];
  paths: number[][];
  /** Distinct answers, in the order the response lists them. */
  answers: string[];
  scoring: LabelScoringPlan;
}

export function planQuestion(lm: LanguageModel, frame: PromptFrame, question: Question): QuestionPlan {
  const block = questionBlock(question);
  const before = block.text + frame.tail + frame.lead;
  const full = block.labels.map((l) => lm.encode(before + l.surface, false));
  let common = Math.min(...full.map((ids) => ids.length)) - 1;
  for (let i = 0; i < common; i++) {
    const token = full[0]![i];
    if (full.some((ids) => ids[i] !== token)) {
      common = i;
      break;
    }
  }
  const paths = full.map((ids) => ids.slice(common));
  const answers: string[] = [];
  for (const l of block.labels) if (!answers.includes(l.answer)) answers.push(l.answer);
  return {
    promptIds: full[0]!.slice(0, common),
    labels: block.labels,
    paths,
    answers,
    scoring: planLabelScoring(paths),
  };
}

/** Tokens one question needs in the context beyond the state: its prompt and longest label path. */
export function questionSpan(plan: QuestionPlan): number {
  return plan.promptIds.length + Math.max(...plan.paths.map((p) => p.length));
}
