import type { Question } from '../../contract/index.ts';
import { questionBlock, type LabelSurface, type PromptFrame } from './decision-prompt.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';
import { planLabelScoring, type LabelScoringPlan } from './label-scoring.ts';
import { stateMemo, type StateMemo, type StateWindow } from './state-memo.ts';
import { prependsOnly, tokenCuts } from '../model/token-cuts.ts';

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
 * tokens removed; a check per question that this equals the joint tokenization of the whole text.
 * The check reads only the state's last characters, from a cut where the tokenizer provably splits
 * the same way whatever follows (`stateWindow`, ../model/token-cuts.ts), and the whole text where
 * no cut is provable. Where the check fails, every label is encoded with the whole text (exact,
 * slower).
 * The state's ids and the checks that passed are kept per model for recent states (state-memo.ts):
 * the same state and question asked again cost no tokenization at all.
 *
 * The prompt is the longest token prefix that all labels share, so answer paths start where they
 * diverge (every path keeps at least one token).
 */
export interface QuestionPlan {
  /** The state tokens this plan continues: the state prefix's own ids, or fewer where the question's first token merges into them. */
  stateIds: readonly number[];
  promptIds: number[];
  labels: LabelSurface[];
  paths: number[][];
  /** Distinct answers, in the order the response lists them. */
  answers: string[];
  scoring: LabelScoringPlan;
}

const SEAM = '\n\n';

export function planQuestion(
  lm: Pick<TokenizerModel, 'encode'> & Partial<Pick<TokenizerModel, 'tokenizer'>>,
  frame: PromptFrame,
  question: Question,
  memo: StateMemo = stateMemo(lm, frame.prefix, frame.addSpecialTokens),
): QuestionPlan {
  const prefixIds = memo.ids;
  const block = questionBlock(question);
  const before = block.text + frame.tail + frame.lead;
  const first = before + block.labels[0]!.surface;
  const seam = frame.prefix.endsWith(SEAM) ? seamPlan(lm, before, block.labels) : null;
  let joint0: number[] | null = null;
  let agrees = seam !== null && memo.joint.has(first);
  if (seam && !agrees) {
    // The whole-prompt check, on the state's last characters when the tokenizer provably splits
    // there (token-cuts.ts): the same answer as encoding the whole prompt, at the cost of a window.
    if (memo.window === undefined) memo.window = stateWindow(lm, frame);
    const window = memo.window;
    agrees = window !== null && windowAgrees(lm, window, first, seam.rest0, memo);
    if (!agrees) {
      joint0 = lm.encode(frame.prefix + first, frame.addSpecialTokens);
      agrees = equalIds(joint0, [...prefixIds, ...seam.rest0]);
    }
    if (agrees) memo.joint.add(first);
  }
  // The seam reproduces the joint tokenization: the question's part of the plan is the seam's, whatever the state.
  if (seam && agrees) return { stateIds: prefixIds, ...seam.part };
  // It does not: encode every label with the whole text.
  joint0 ??= lm.encode(frame.prefix + first, frame.addSpecialTokens);
  const full = [joint0, ...block.labels.slice(1).map((l) => lm.encode(frame.prefix + before + l.surface, frame.addSpecialTokens))];
  let shared = prefixIds.length;
  for (const ids of full) shared = Math.min(shared, commonPrefix(prefixIds, ids));
  return { stateIds: prefixIds.slice(0, shared), ...questionPart(block.labels, full.map((ids) => ids.slice(shared))) };
}

/** A plan less its state tokens: what follows from each label's tokens after the state (`rests`). */
type QuestionPart = Omit<QuestionPlan, 'stateIds'>;

function questionPart(labels: readonly LabelSurface[], rests: readonly (readonly number[])[]): QuestionPart {
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
  for (const l of labels) if (!answers.includes(l.answer)) answers.push(l.answer);
  return {
    promptIds: rests[0]!.slice(0, common),
    labels: [...labels],
    paths,
    answers,
    scoring: planLabelScoring(paths),
  };
}

/**
 * A question's plan after the seam (`seamEncodings`), for every state whose whole-prompt check
 * passes: it depends on the question's text, the frame's tail and the labels alone, so it is
 * kept per model (the most recent SEAM_PLAN_CACHE_SIZE) and shared by the plans that use it (its
 * arrays frozen: read, never changed). A question asked again, of the same state or another, is
 * neither encoded nor planned again. Null where the seam's tokens do not lead.
 */
interface SeamPlan {
  /** The first label's tokens after the seam (what the whole-prompt check compares). */
  rest0: readonly number[];
  part: QuestionPart;
}

const SEAM_PLAN_CACHE_SIZE = 1024;
const seamPlans = new WeakMap<object, Map<string, SeamPlan | null>>();

function seamPlan(lm: Pick<TokenizerModel, 'encode'>, before: string, labels: readonly LabelSurface[]): SeamPlan | null {
  let cache = seamPlans.get(lm);
  if (!cache) seamPlans.set(lm, (cache = new Map()));
  // Unambiguous: every label's answer and surface with its length, then the text.
  let key = `${labels.length}`;
  for (const l of labels) key += `:${l.answer.length}:${l.answer}${l.surface.length}:${l.surface}`;
  key += `|${before}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const rests = seamEncodings(lm, before, labels);
  let plan: SeamPlan | null = null;
  if (rests) {
    const part = questionPart(labels, rests);
    for (const path of part.paths) Object.freeze(path);
    for (const label of part.labels) Object.freeze(label);
    Object.freeze(part.promptIds);
    Object.freeze(part.paths);
    Object.freeze(part.labels);
    Object.freeze(part.answers);
    plan = { rest0: Object.freeze(rests[0]!), part: Object.freeze(part) };
  }
  cache.set(key, plan);
  if (cache.size > SEAM_PLAN_CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return plan;
}

/** How far back from the state prefix's end a window's cut is looked for (characters). */
const WINDOW_REACH = 256;

/**
 * The state prefix's window: its text from one character before its last cut (token-cuts.ts) and
 * that text's ids. A cut at `c` splits `prefix` and `prefix + q` alike, so that, for any `q` and
 * `rest`, `encode(prefix + q) = encode(prefix) ++ rest` exactly when `encode(prefix[c-1..] + q) =
 * encode(prefix[c-1..]) ++ rest`: both sides share the tokens before the cut (read with the same
 * `prefix[c]` after them, and with the special tokens, if any, only put in front), and the tokens
 * from the cut on depend on the text from the cut on alone. Null where no cut is provable (the
 * whole prompt is then encoded, as before).
 */
function stateWindow(lm: Pick<TokenizerModel, 'encode'> & Partial<Pick<TokenizerModel, 'tokenizer'>>, frame: PromptFrame): StateWindow | null {
  if (!lm.tokenizer) return null;
  const cuts = tokenCuts(lm.tokenizer);
  if (!cuts || (frame.addSpecialTokens && !prependsOnly(lm.tokenizer))) return null;
  const { prefix } = frame;
  const cut = cuts.lastBefore(prefix, prefix.length - 1, prefix.length - WINDOW_REACH);
  if (cut < 1) return null;
  const text = prefix.slice(cut - 1);
  return { text, ids: lm.encode(text, false) };
}

/** How far into a question's text a cut is looked for (characters). */
const FIRST_REACH = 64;

/**
 * Whether `encode(window.text + first)` is `window.ids ++ rest` (`rest`: `first`'s tokens after
 * the seam), which is whether the whole prompt's tokenization is `prefix ids ++ rest`
 * (`stateWindow`). Where the tokenizer's tokens after a cut are the encoding of the text after it
 * (`standalone`), and `first` has a cut at `d` (`SEAM + first[..d]` and `window.text + first[..d]`
 * both end in the same character, the state prefix's last `\n`, when d = 0): every text that goes on
 * with `first[d..]` has the same tokens from the cut on, so only the tokens before the cut are
 * compared, each read from the text up to `first[d]` (its look-ahead), less `first[d]`'s own tokens.
 * `first[d]`'s and the seam text's encodings do not depend on the state and are kept (`seamEncode`).
 */
function windowAgrees(
  lm: Pick<TokenizerModel, 'encode'> & Partial<Pick<TokenizerModel, 'tokenizer'>>,
  window: StateWindow,
  first: string,
  rest: readonly number[],
  memo: StateMemo,
): boolean {
  const cuts = lm.tokenizer ? tokenCuts(lm.tokenizer) : null;
  if (cuts?.standalone) {
    const seamed = SEAM + first;
    let d = 0;
    while (d < Math.min(first.length, FIRST_REACH) && !cuts.at(seamed, SEAM.length + d)) d++;
    if (d < Math.min(first.length, FIRST_REACH)) {
      // A function of the window and `first[..d]` alone: kept per state for the questions that begin alike.
      const head = first.slice(0, d + 1);
      memo.heads ??= new Map();
      let known = memo.heads.get(head);
      if (known === undefined) memo.heads.set(head, (known = headAgrees(lm, window, head)));
      if (known !== null) return known;
    }
  }
  return equalIds(lm.encode(window.text + first, false), [...window.ids, ...rest]);
}

/** `windowAgrees` for a question that starts with `head`, whose last character follows a cut; null where the tokens do not allow the shortcut. */
function headAgrees(lm: Pick<TokenizerModel, 'encode'>, window: StateWindow, head: string): boolean | null {
  const own = seamEncode(lm, head[head.length - 1]!);
  const seamIds = seamEncode(lm, SEAM);
  const seamHead = seamEncode(lm, SEAM + head);
  const windowHead = lm.encode(window.text + head, false);
  const before = seamHead.length - own.length;
  if (before >= seamIds.length && endsWith(seamHead, own) && endsWith(windowHead, own) && commonPrefix(seamIds, seamHead) === seamIds.length) {
    return equalIds(windowHead.slice(0, windowHead.length - own.length), [...window.ids, ...seamHead.slice(seamIds.length, before)]);
  }
  return null;
}

function endsWith(ids: readonly number[], tail: readonly number[]): boolean {
  if (tail.length > ids.length) return false;
  for (let i = 1; i <= tail.length; i++) if (ids[ids.length - i] !== tail[tail.length - i]) return false;
  return true;
}

/** Each label's tokens after the state prefix, from `SEAM + before + label` less the seam's tokens; null if the seam's tokens do not lead. */
function seamEncodings(lm: Pick<TokenizerModel, 'encode'>, before: string, labels: readonly LabelSurface[]): number[][] | null {
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
