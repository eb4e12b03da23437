/**
 * A reply written under a grammar (`response_format` json_object or json_schema): each step the
 * grammar's matcher says which tokens may come next, the log-probabilities of the others become
 * -Infinity (the rest renormalized: the distribution the sampler draws from, and the logprobs
 * reported), the drawn token is fed to the matcher, and the reply ends when the matcher has
 * taken a stop token (which is never shown).
 *
 * A thinking model (Qwen3) thinks freely: where the prompt leaves a think block open, the grammar
 * starts after `</think>`; where the model may open one (its template thinks, the prompt has no
 * closed block), its first token may be `<think>` (when that is one token) as well as what the
 * grammar allows. While it thinks, only its stop tokens are ruled out: a reply under a grammar
 * ends in the grammar, or at max_tokens.
 *
 * Tokens that hold a control character are ruled out inside JSON strings only (token-vocabulary.ts,
 * `jsonSafe`): a JSON response format is JSON throughout, but a tool call's tags hold newlines and
 * free text around calls may too. Where the reply is in a JSON string is read from its text: from
 * the last trigger that opened a call (or from the answer's start, where the reply may be a JSON
 * answer), quotes are counted, escapes skipped.
 */
import { JevError } from '../../contract/index.ts';
import { maskAllows, maskIsEmpty, type GrammarFormat, type GrammarMatcher } from '../grammar/backend.ts';
import { GrammarLost } from '../grammar/worker-grammar-backend.ts';
import type { GrammarCache } from '../grammar/grammar-cache.ts';
import { expNonPositive } from '../model/exp-non-positive.ts';
import type { LanguageModel } from '../model/language-model.ts';

/**
 * `slowFillMs`: steps offer candidates first (`offerCandidates`) after a mask that took at least
 * this long to fill, and from the first step on where it is 0: the default, as measured on the
 * 49,152-token vocabulary (greedy, ms a token, medians of 3 interleaved: a string of maxLength 40
 * 44.2 at 0, 62.5 at 4 ms, 107.3 never, unconstrained 38.4; a free string 41.5 / 43.4 / 45.1;
 * zod's user 43.0 / 42.3 / 42.4; sampled at temperature 1 the same order). Tests set Infinity
 * (never) to compare the two ways.
 */
export const offerPolicy = { slowFillMs: 0 };

const OPEN = '<think>';
const CLOSE = '</think>';

/** Where the grammar starts: at once, after a think block the model may open, or after the one the prompt opened. */
export type ConstraintStart = 'now' | 'may-think' | 'thinking';

/** Where a reply's grammar starts, from the rendered prompt (chat-reasoning.ts reads the same tags). */
export function constraintStart(templateThinks: boolean, promptText: string): ConstraintStart {
  if (!templateThinks) return 'now';
  const open = promptText.lastIndexOf(OPEN);
  const close = promptText.lastIndexOf(CLOSE);
  if (open >= 0 && open > close) return 'thinking';
  // A block the template closed for the model (thinking off): the answer comes next.
  if (/<\/think>\s*$/.test(promptText)) return 'now';
  return 'may-think';
}

export class ReplyConstraint {
  readonly #matcher: GrammarMatcher;
  readonly #mask: Int32Array;
  #phase: ConstraintStart;
  /** The id of `<think>` where it is one token (else a constrained reply cannot open a think block). */
  readonly #thinkOpen: number | null;
  /** Where the think block's text begins in the reply (to find its `</think>`). */
  #thinkFrom = 0;
  /** While the model thinks: every token but the stop tokens. */
  readonly #thinking: Int32Array;
  /** Tool calls: what opens one; whether the reply may be a JSON answer instead. Null: JSON throughout. */
  readonly #calls: { triggers: readonly string[]; answer: boolean } | null;
  /** Where the answer (after any think block) begins in the reply's text. */
  #answerFrom = 0;
  /** Whether the reply's text now ends inside a JSON string. */
  #inString = false;
  /**
   * The next mask's fill, asked for as soon as the last token was accepted: a grammar worker
   * (grammar/worker-grammar-backend.ts) fills it while the model runs the next forward pass.
   */
  #next: Promise<void> | null = null;
  /** Whether the reply's steps may offer candidates (`offerCandidates`). */
  #offers = false;
  /**
   * Whether the next step offers them (`offerPolicy`: at every step, by default). Meanwhile no mask
   * is filled ahead.
   */
  #offering = false;
  /** Whether the step's token was already taken by the matcher (`take`). */
  #taken = false;
  /** How long the last mask took to fill, from when it was asked for (NaN: not measured). */
  #fillMs = Number.NaN;

  private constructor(matcher: GrammarMatcher, width: number, stopTokens: Iterable<number>, phase: ConstraintStart, thinkOpen: number | null, format: GrammarFormat) {
    this.#matcher = matcher;
    this.#calls = format.type === 'tool_calls' ? { triggers: format.triggers, answer: format.answer !== null } : null;
    this.#mask = new Int32Array(Math.ceil(width / 32));
    this.#thinking = new Int32Array(this.#mask.length).fill(-1);
    for (const id of stopTokens) if (id < width) this.#thinking[id >> 5] = this.#thinking[id >> 5]! & ~(1 << (id & 31));
    this.#thinkOpen = thinkOpen;
    this.#phase = phase === 'may-think' && thinkOpen === null ? 'now' : phase;
  }

  /**
   * The grammar of `format` for `lm` (compiled, or from the cache) and a matcher over it. Refuses
   * (422, `response_format`) where the vocabulary cannot write the grammar's first token.
   */
  static async open(grammars: GrammarCache, lm: LanguageModel, format: GrammarFormat, stopTokens: Iterable<number>, start: ConstraintStart): Promise<ReplyConstraint> {
    const vocab = grammars.vocabulary(lm, stopTokens);
    let matcher: GrammarMatcher;
    try {
      matcher = await grammars.matcher(await grammars.grammar(vocab, format));
    } catch (e) {
      // Its grammar worker was terminated (at another compile's bound) since it was compiled: once more.
      if (!(e instanceof GrammarLost)) throw e;
      matcher = await grammars.matcher(await grammars.grammar(vocab, format));
    }
    try {
      const ids = start === 'may-think' ? lm.encode(OPEN, false) : [];
      const constraint = new ReplyConstraint(matcher, vocab.width, vocab.stopTokenIds, start, ids.length === 1 ? ids[0]! : null, format);
      await matcher.fillNextTokenBitmask(constraint.#mask, constraint.#jsonSafe);
      if (maskIsEmpty(constraint.#mask)) throw unwritable(lm);
      // The first step's mask is this one.
      constraint.#next = Promise.resolve();
      return constraint;
    } catch (e) {
      matcher.dispose();
      throw e;
    }
  }

  /** Whether the grammar constrains the next token (not while the model thinks). */
  get active(): boolean {
    return this.#phase !== 'thinking';
  }

  /** The phase: the grammar now, the model's first token (grammar or `<think>`), or thinking. */
  get phase(): ConstraintStart {
    return this.#phase;
  }

  get terminated(): boolean {
    return this.#matcher.isTerminated();
  }

  /** The tokens allowed next (call once per step). */
  async nextMask(): Promise<Int32Array> {
    if (this.#phase === 'thinking') return this.#thinking;
    const mask = this.#mask;
    const next = this.#next ?? this.#fill();
    this.#next = null;
    await next;
    if (this.#offers) this.#offering = offerPolicy.slowFillMs <= 0 || this.#fillMs >= offerPolicy.slowFillMs;
    if (maskIsEmpty(mask)) throw new JevError('unprocessable', "The model's vocabulary cannot go on writing this response_format: the grammar allows none of its tokens next.", { param: 'response_format' });
    if (this.#phase === 'may-think') mask[this.#thinkOpen! >> 5] = mask[this.#thinkOpen! >> 5]! | (1 << (this.#thinkOpen! & 31));
    return mask;
  }

  /**
   * Lets steps offer the matcher candidates before a mask is filled (greedy, and sampling at top_p
   * 1 without logprobs: chat.ts). A mask is slow to fill where xgrammar walks the whole vocabulary
   * (inside a length-bounded string: 50–200 ms on 49k tokens, docs/structured-output.md), and then
   * the forward pass waits for it; a candidate costs one token's walk, and where none is taken the
   * step fills its mask then. Meanwhile no mask is filled ahead (`offerPolicy` says when to offer).
   */
  offerCandidates(): void {
    this.#offers = true;
    this.#offering = offerPolicy.slowFillMs <= 0;
  }

  /**
   * The first of `candidates()` that the next mask allows, taken by the matcher (then `accept`
   * does not feed it again); -1 where it allows none of them, or where this step reads a mask
   * (the steps are not offering now, or the model may open a think block). Greedy's candidates are
   * the row's best tokens in order (sampler.ts, `greedyCandidates`): the first allowed is the
   * masked argmax. A sampled step's are the best of its row perturbed by Gumbel noise
   * (`gumbelScores`): the first allowed is the masked argmax of the perturbed row, the same token a
   * filled mask gives, and a draw from the masked distribution.
   */
  async take(candidates: () => readonly number[] | null): Promise<number> {
    if (!this.#offering || this.#phase !== 'now' || this.#next !== null) return -1;
    const offered = candidates();
    if (!offered?.length) return -1;
    const token = await this.#matcher.acceptFirst(offered, this.#jsonSafe);
    if (token >= 0) this.#taken = true;
    return token;
  }

  /** After the step's token was drawn: the matcher takes it (while active); `reply` is the reply's text so far. */
  accept(token: number, reply: string): void {
    if (this.#phase === 'may-think' && token === this.#thinkOpen) {
      this.#phase = 'thinking';
      this.#thinkFrom = reply.lastIndexOf(OPEN) + OPEN.length;
      return;
    }
    if (this.#phase === 'thinking') {
      const close = reply.indexOf(CLOSE, this.#thinkFrom);
      if (close >= 0) {
        this.#phase = 'now';
        this.#answerFrom = close + CLOSE.length;
      }
      return;
    }
    this.#phase = 'now';
    if (this.#taken) this.#taken = false;
    else if (!this.#matcher.accept(token)) throw new Error(`the grammar refused token ${token}, which its own mask allowed`);
    if (this.#calls) this.#inString = endsInString(reply, this.#jsonFrom(reply));
    if (this.#offering) return;
    const next = this.#fill();
    // Awaited by the next step's `nextMask`; a reply that ends first leaves it unread.
    next.catch(() => undefined);
    this.#next = next;
  }

  /** Fills the next mask, timed (`#fillMs`). */
  #fill(): Promise<void> {
    const asked = performance.now();
    return this.#matcher.fillNextTokenBitmask(this.#mask, this.#jsonSafe).then(() => {
      this.#fillMs = performance.now() - asked;
    });
  }

  /** Whether the next token must be one JSON text may hold. */
  get #jsonSafe(): boolean {
    return this.#calls === null || this.#inString;
  }

  /** Where the reply's JSON begins: at the last trigger, else at the answer's start (where it may be JSON), else nowhere (-1). */
  #jsonFrom(reply: string): number {
    let from = -1;
    for (const trigger of this.#calls!.triggers) from = Math.max(from, reply.lastIndexOf(trigger));
    if (from < this.#answerFrom) from = this.#calls!.answer ? this.#answerFrom : -1;
    return from;
  }

  dispose(): void {
    this.#matcher.dispose();
  }
}

/** Whether `text`, read as JSON from `from` (-1: not JSON), ends inside a string. */
export function endsInString(text: string, from: number): boolean {
  if (from < 0) return false;
  let inside = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (!inside) inside = c === '"';
    else if (c === '\\') i++;
    else if (c === '"') inside = false;
  }
  return inside;
}

function unwritable(lm: LanguageModel): JevError {
  return new JevError(
    'unprocessable',
    `The model ${lm.id} cannot write this response_format: no token of its vocabulary can begin it (a vocabulary of ${lm.vocabSize} tokens may lack "{" or '"'). Use a model with a larger vocabulary, or no response_format.`,
    { param: 'response_format' },
  );
}

/**
 * `logp` with the tokens `mask` rules out at -Infinity and the rest renormalized (in place), for
 * the logprobs a request asks for. Without logprobs the sampler reads the mask itself
 * (chat/sampler.ts), with no copy or renormalizing of the row.
 */
export function maskLogProbs(logp: Float64Array, mask: Int32Array): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logp.length; i++) {
    if (!maskAllows(mask, i)) logp[i] = -Infinity;
    else if (logp[i]! > max) max = logp[i]!;
  }
  let sum = 0;
  for (let i = 0; i < logp.length; i++) if (logp[i] !== -Infinity) sum += expNonPositive(logp[i]! - max);
  const norm = max + Math.log(sum);
  for (let i = 0; i < logp.length; i++) if (logp[i] !== -Infinity) logp[i] = logp[i]! - norm;
  return logp;
}

