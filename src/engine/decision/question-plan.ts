import type { Question } from '../../contract/index.ts';
import { questionBlock, type LabelSurface, type PromptFrame } from './decision-prompt.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';
import { planLabelScoring, type LabelScoringPlan } from './label-scoring.ts';
import { stateMemo, type StateMemo } from './state-memo.ts';

/**
 * The token-level plan of one question: the tokens fed after the state, and each answer
 * label's token path after them.
 *
 * The token ids are those of the whole prompt text tokenized at once (state prefix, question
 * block, tail, label), so each label is scored as the tokens the model would really read and
 * write, whatever the tokenizer does at the seams: byte-level BPE merging a label with the text
 * before it, or a SentencePiece normalizer that puts a `▁` at the start of every piece of text it
 * is given (Phi-3), which encoding the question block on its own would wrongly add.
 *
 * Encoding the state with every label would cost the state's length once per label, so the
 * question is encoded after a short seam (`\n\n`, the end of every state prefix) and the seam's
 * tokens removed; one encoding of the whole text per question checks that this equals the joint
 * tokenization. Where it does not, every label is encoded with the whole text (exact, slower).
 * The state's ids and the checks that passed are kept per model for recent states (state-memo.ts):
 * the same state and question asked again cost no tokenization at all.
 *
 * The prompt is the longest token prefix that all labels share, so answer paths start where they
 * diverge (every path keeps at least one token).
 */
export interface QuestionPlan {
  /** The state tokens this plan continues: the state prefix's own ids, or fewer where the question's first token merges into them. */
  stateIds: number[];
  promptIds: number[];
  labels: LabelSurface[];
  paths: number[][];
  /** Distinct answers, in the order the response lists them. */
  answers: string[];
  scoring: LabelScoringPlan;
}

const SEAM = '\n\n';

export function planQuestion(
  lm: Pick<TokenizerModel, 'encode'>,
  frame: PromptFrame,
  question: Question,
  memo: StateMemo = stateMemo(lm, frame.prefix, frame.addSpecialTokens),
): QuestionPlan {
  const prefixIds = memo.ids;
  const block = questionBlock(question);
  const before = block.text + frame.tail + frame.lead;
  const first = before + block.labels[0]!.surface;
  let stateIds = [...prefixIds];
  let rests = seamEncodings(lm, frame, before, block.labels);
  let joint0: number[] | null = null;
  let agrees = rests !== null && memo.joint.has(first);
  if (rests && !agrees) {
    joint0 = lm.encode(frame.prefix + first, frame.addSpecialTokens);
    agrees = equalIds(joint0, [...prefixIds, ...rests[0]!]);
    if (agrees) memo.joint.add(first);
  }
  if (!rests || !agrees) {
    // The seam does not reproduce the joint tokenization: encode every label with the whole text.
    joint0 ??= lm.encode(frame.prefix + first, frame.addSpecialTokens);
    const full = [joint0, ...block.labels.slice(1).map((l) => lm.encode(frame.prefix + before + l.surface, frame.addSpecialTokens))];
    let shared = prefixIds.length;
    for (const ids of full) shared = Math.min(shared, commonPrefix(prefixIds, ids));
    stateIds = prefixIds.slice(0, shared);
    rests = full.map((ids) => ids.slice(shared));
  }
  let common = Math.min(...rests.map((ids) => ids.length)) - 1;
  for (let i = 0; i < common; i++) {
    const token = rests[0]![i];
    if (rests.some((ids) => ids[i] !== token)) {
      common = i;
      break;
    }
  }
  const paths = rests.map((ids) => ids.slice(common));
  const answers: string[] = [];
  for (const l of block.labels) if (!answers.includes(l.answer)) answers.push(l.answer);
  return {
    stateIds,
    promptIds: rests[0]!.slice(0, common),
    labels: block.labels,
    paths,
    answers,
    scoring: planLabelScoring(paths),
  };
}

/** Each label's tokens after the state prefix, from `SEAM + before + label` less the seam's tokens; null if the seam's tokens do not lead. */
function seamEncodings(lm: Pick<TokenizerModel, 'encode'>, frame: PromptFrame, before: string, labels: readonly LabelSurface[]): number[][] | null {
  if (!frame.prefix.endsWith(SEAM)) return null;
  const seamIds = seamEncode(lm, SEAM);
  const out: number[][] = [];
  for (const label of labels) {
    const ids = seamEncode(lm, SEAM + before + label.surface);
    if (commonPrefix(seamIds, ids) !== seamIds.length) return null;
    out.push(ids.slice(seamIds.length));
  }
  return out;
}

/**
 * A question's texts after the seam do not depend on the state, so their encodings are kept per
 * model (the most recent SEAM_CACHE_SIZE): a question asked again, of another state, is not
 * encoded again. Callers copy what they keep.
 */
const SEAM_CACHE_SIZE = 4096;
const seamCaches = new WeakMap<object, Map<string, readonly number[]>>();

function seamEncode(lm: Pick<TokenizerModel, 'encode'>, text: string): readonly number[] {
  let cache = seamCaches.get(lm);
  if (!cache) seamCaches.set(lm, (cache = new Map()));
  const hit = cache.get(text);
  if (hit) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const ids = lm.encode(text, false);
  cache.set(text, ids);
  if (cache.size > SEAM_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return ids;
}

/**
 * The plan continued from a shorter state: the state tokens between `n` and the plan's own
 * `stateIds` length move to the front of its prompt (the same token sequence, split elsewhere).
 */
export function rebasePlan(plan: QuestionPlan, n: number): QuestionPlan {
  if (n === plan.stateIds.length) return plan;
  if (n > plan.stateIds.length) throw new Error(`rebasePlan: ${n} is past the plan's ${plan.stateIds.length} state tokens`);
  return { ...plan, stateIds: plan.stateIds.slice(0, n), promptIds: [...plan.stateIds.slice(n), ...plan.promptIds] };
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function equalIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && commonPrefix(a, b) === a.length;
}

/** Tokens one question needs in the context beyond the state: its prompt and longest label path. */
export function questionSpan(plan: QuestionPlan): number {
  return plan.promptIds.length + Math.max(...plan.paths.map((p) => p.length));
}
