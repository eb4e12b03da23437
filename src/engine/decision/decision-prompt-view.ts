/**
 * What the model read for one question (`include: ["prompt"]`): the text decoded from the very
 * token ids fed before the answer (the state's tokens, then the question's prompt tokens), special
 * tokens written out and no clean-up of spaces, so that tokenizing the text again gives back those
 * ids; and, per answer, the token ids of each label path scored for it after them.
 */
import type { AnswerPrompt } from '../../contract/index.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';
import type { QuestionPlan } from './question-plan.ts';

export function promptOf(lm: Pick<TokenizerModel, 'tokenizer'>, plan: QuestionPlan): AnswerPrompt {
  const ids = [...plan.stateIds, ...plan.promptIds];
  const text = lm.tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  const labelIds: Record<string, number[][]> = Object.create(null);
  for (const answer of plan.answers) labelIds[answer] = [];
  plan.labels.forEach((label, i) => labelIds[label.answer]!.push([...plan.paths[i]!]));
  return { text, label_token_ids: { ...labelIds } };
}
