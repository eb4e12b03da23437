import type { TokenizerModel } from '../model/tokenizer-model.ts';

/**
 * What planning keeps per model for its most recent states (STATE_MEMO_SIZE, least recently used
 * dropped first): the state prefix's token ids, and the question texts whose joint tokenization
 * with that prefix was checked equal to the seam's (question-plan.ts). A state asked again — the
 * next request on the same document, in the browser or through a server that plans every request
 * (src/server/) — is not tokenized again. Nothing is approximated: a hit gives what tokenizing
 * would give, because the key is the whole text that would be tokenized.
 */
export interface StateMemo {
  /** The state prefix's ids (shared and frozen: callers copy what they change). */
  readonly ids: readonly number[];
  /** Texts after the prefix (question block, tail, first label) whose joint tokenization equals prefix ids ++ their seam ids. */
  readonly joint: Set<string>;
  /** The prefix's window for that check (question-plan.ts): unset until first needed, null where the tokenizer gives no cut. */
  window?: StateWindow | null;
  /** That check's answer per question head (question-plan.ts `windowAgrees`): questions that begin alike share it. */
  heads?: Map<string, boolean | null>;
}

/** The state prefix's text from one character before a cut (../model/token-cuts.ts) to its end, and that text's ids. */
export interface StateWindow {
  readonly text: string;
  readonly ids: readonly number[];
}

const STATE_MEMO_SIZE = 64;
/** Question texts remembered per state, past which the set starts again. */
const JOINT_PER_STATE = 1024;
const memos = new WeakMap<object, Map<string, StateMemo>>();

export function stateMemo(lm: Pick<TokenizerModel, 'encode'>, prefix: string, addSpecialTokens: boolean): StateMemo {
  let memo = memos.get(lm);
  if (!memo) memos.set(lm, (memo = new Map()));
  const key = `${addSpecialTokens ? 1 : 0}${prefix}`;
  const hit = memo.get(key);
  if (hit) {
    memo.delete(key);
    memo.set(key, hit);
    if (hit.joint.size > JOINT_PER_STATE) hit.joint.clear();
    if (hit.heads && hit.heads.size > JOINT_PER_STATE) hit.heads.clear();
    return hit;
  }
  // Frozen: shared by every plan of this state (state-plan.ts), and kept with its JSON text by the server (src/server/backend.ts).
  const entry: StateMemo = { ids: Object.freeze(lm.encode(prefix, addSpecialTokens)), joint: new Set() };
  memo.set(key, entry);
  if (memo.size > STATE_MEMO_SIZE) memo.delete(memo.keys().next().value!);
  return entry;
}
