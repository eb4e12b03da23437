/**
 * The token-level plan of an extraction: the state's tokens every field shares (the prefix
 * computed once, as a decision's), and per field the tokens fed after them, the `null` answer's
 * token path, and the bytes its value must begin with.
 *
 * Each field's prompt text P = frame prefix + field block + tail + lead is tokenized whole, and so
 * is P + "null": the field's prompt is their common token prefix (the root), the null path what
 * follows it. Where the tokenizer merges P's last characters with "null" (a space before it),
 * those characters are not fed: their bytes become the start every value must write (`preamble`),
 * so that both answers are read from the same root.
 */
import { JevError, type ExtractionField, type ExtractionRequest } from '../../contract/index.ts';
import { promptFrame } from '../decision/decision-prompt.ts';
import { stateMemo } from '../decision/state-memo.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';
import { fieldBlock, NULL_ANSWER } from './extraction-prompt.ts';
import { bytesOf, type TokenBytes } from './token-bytes.ts';

export interface FieldPlan {
  key: string;
  field: ExtractionField;
  /** Tokens fed after the shared state prefix (never empty). */
  promptIds: number[];
  /** The `null` answer's tokens after the prompt. */
  nullPath: number[];
  /** Bytes every value begins with (usually none). */
  preamble: Uint8Array;
}

export interface ExtractionPlan {
  prefixIds: readonly number[];
  fields: FieldPlan[];
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export function planExtraction(lm: Pick<TokenizerModel, 'tokenizer' | 'encode' | 'contextLength'>, table: TokenBytes, request: ExtractionRequest): ExtractionPlan {
  const frame = promptFrame(lm, request.state);
  const memo = stateMemo(lm, frame.prefix, frame.addSpecialTokens);
  const ownIds = memo.ids;
  const planned = Object.entries(request.fields).map(([key, field]) => {
    const text = frame.prefix + fieldBlock(key, field, request.referenceDate) + frame.tail + frame.lead;
    const full = lm.encode(text, frame.addSpecialTokens);
    const withNull = lm.encode(text + NULL_ANSWER, frame.addSpecialTokens);
    const root = commonPrefix(full, withNull);
    const stateShared = Math.min(commonPrefix(ownIds, full), root - 1);
    const preambleIds = full.slice(root);
    const bytes = preambleIds.map((id) => bytesOf(table, id));
    const preamble = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of bytes) {
      preamble.set(b, at);
      at += b.length;
    }
    return { key, field, full, root, stateShared, nullPath: withNull.slice(root), preamble };
  });
  const shared = Math.min(...planned.map((p) => p.stateShared));
  if (shared <= 0) throw new Error('extract: no state token is shared by the fields');
  const prefixIds = shared === ownIds.length ? ownIds : ownIds.slice(0, shared);
  const fields = planned.map((p) => ({ key: p.key, field: p.field, promptIds: p.full.slice(shared, p.root), nullPath: p.nullPath, preamble: p.preamble }));
  const longest = Math.max(...fields.map((f) => f.promptIds.length + f.nullPath.length));
  if (prefixIds.length + longest >= lm.contextLength) {
    throw new JevError(
      'context_length_exceeded',
      `The state takes ${prefixIds.length} tokens and the longest field ${longest} more before its value, ${prefixIds.length + longest} in all; the model's context holds ${lm.contextLength}.`,
      { param: 'state', details: { state_tokens: prefixIds.length, field_tokens: longest, context_length: lm.contextLength } },
    );
  }
  return { prefixIds, fields };
}
