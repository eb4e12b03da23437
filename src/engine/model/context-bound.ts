import { formatParam, JevError, type DecisionRequest } from '../../contract/index.ts';
import type { TokenizerModel } from './tokenizer-model.ts';

/** Tokens past the limit a prefix must show before the whole text is taken to be past it. */
const MARGIN = 16;

/**
 * Whether `text` alone is far past `limit` tokens, found by tokenizing growing prefixes of it
 * (8 characters a token to begin with, four times more each step): a request far past the
 * context is then refused after reading about a context's worth of text, not all of it (a state
 * of a million characters, 256 instructions of 100,000 each). Returns the prefix's token count
 * that shows it (at least 1.5 × limit + 16, so that how a word cut at the prefix's end would
 * tokenize cannot matter), or null: not far past, or short enough to be read whole anyway.
 */
export function tokensFarBeyond(lm: Pick<TokenizerModel, 'encode'>, text: string, limit: number): number | null {
  for (let size = Math.max(1024, limit * 8); size < text.length; size *= 4) {
    const n = lm.encode(text.slice(0, size), false).length;
    if (n > limit * 1.5 + MARGIN) return n;
  }
  return null;
}

/**
 * Refuses, before any of it is tokenized whole, a decision whose state or one of whose questions
 * alone is far past the model's context (422 `context_length_exceeded`, naming the field).
 */
export function refuseFarPastContext(lm: Pick<TokenizerModel, 'encode' | 'contextLength'>, request: Pick<DecisionRequest, 'state' | 'questions'>): void {
  const context = lm.contextLength;
  const state = tokensFarBeyond(lm, request.state, context);
  if (state !== null) {
    throw new JevError(
      'context_length_exceeded',
      `The state takes more than ${state} tokens (its first part alone); the model's context holds ${context}.`,
      { param: 'state', details: { state_tokens_at_least: state, context_length: context } },
    );
  }
  for (const [key, question] of Object.entries(request.questions)) {
    const criteria = Array.isArray(question.criteria) ? question.criteria : Object.entries(question.criteria).flat();
    const text = [question.instructions, ...criteria.filter((s): s is string => typeof s === 'string')].join('\n');
    const tokens = tokensFarBeyond(lm, text, context);
    if (tokens === null) continue;
    const param = formatParam(['questions', key]);
    throw new JevError(
      'context_length_exceeded',
      `The question ${param} takes more than ${tokens} tokens (its first part alone); the model's context holds ${context}.`,
      { param, details: { question_tokens_at_least: tokens, context_length: context } },
    );
  }
}
