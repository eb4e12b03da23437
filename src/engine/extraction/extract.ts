/**
 * An extraction: one state, F fields. The state's key/value cache is computed once (or taken from
 * the prefix cache, where a decision or an earlier extraction on the same document left it) and
 * every field branches from it (decode-field.ts; the values decoded side by side, decode-rows.ts), so a field's answer depends neither on the
 * order of the fields nor on which other fields are asked: its value exactly, its probabilities
 * within float rounding (a batched pass sums in another order: within 1e-5 of the field asked
 * alone, test/engine/extraction-families.test.ts). The state's cache goes back to the prefix cache
 * for the next request.
 */
import { customAlphabet } from 'nanoid';
import type { ExtractionAnswer, ExtractionRequest, ExtractionResponse } from '../../contract/index.ts';
import { LanguageModel } from '../model/language-model.ts';
import { modelVersion } from '../model/model-version.ts';
import { continueFrom, keepCache, startFrom, type PrefixCache } from '../model/prefix-cache.ts';
import type { DecodedField } from './decode-field.ts';
import { decodeFields } from './decode-rows.ts';
import { fieldAnswer } from './field-answer.ts';
import { fieldMachine, maxValueBytes, partsAutomaton } from './field-machine.ts';
import { planExtraction, type FieldPlan } from './field-plan.ts';
import { tokenBytes } from './token-bytes.ts';
import type { SuffixAutomaton } from './copy-automaton.ts';

const requestId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 24);

export interface ExtractOptions {
  signal?: AbortSignal | undefined;
  /** Where the state's cache is looked up and left (null: every request starts cold). */
  prefixes: PrefixCache | null;
}

/** What each field's passes read and wrote, for tests that recompute them from the whole prompt. */
export interface FieldTrace {
  plan: FieldPlan;
  decoded: DecodedField;
}

export interface Extraction {
  response: ExtractionResponse;
  prefixIds: readonly number[];
  traces: Record<string, FieldTrace>;
  cachedTokens: number;
  cacheWriteTokens: number;
}

export async function extract(lm: LanguageModel, request: ExtractionRequest, opts: ExtractOptions): Promise<Extraction> {
  const { signal, prefixes } = opts;
  const table = tokenBytes(lm);
  const plan = planExtraction(lm, table, request);
  let sam: SuffixAutomaton | null = null;
  const samOf = () => (sam ??= partsAutomaton(request.parts));

  signal?.throwIfAborted();
  const { prefixIds } = plan;
  const start = startFrom(prefixes, lm, prefixIds, prefixIds.length);
  let stateCache = start.cache;
  if (start.reused < prefixIds.length) {
    const pass = await continueFrom(prefixes, lm, start, prefixIds.slice(0, start.reused), prefixIds.slice(start.reused));
    stateCache = pass.cache;
    pass.logits.dispose();
  }
  const traces: Record<string, FieldTrace> = {};
  const answers: Record<string, ExtractionAnswer> = {};
  let fed = prefixIds.length - start.reused;
  let output = 0;
  try {
    const jobs = plan.fields.map((field) => ({ plan: field, machine: fieldMachine(field.field, samOf), maxSteps: maxValueBytes(field.field) + 1 }));
    const decoded = await decodeFields(lm, table, stateCache, prefixIds.length, jobs, signal);
    for (const [i, field] of plan.fields.entries()) {
      const d = decoded[i]!;
      traces[field.key] = { plan: field, decoded: d };
      answers[field.key] = fieldAnswer(field.field, d, request.parts);
      fed += d.fed - (d.valueIds?.length ?? 0);
      output += d.valueIds?.length ?? 0;
    }
  } catch (e) {
    keepCache(prefixes, prefixIds, stateCache);
    throw e;
  }
  const written = keepCache(prefixes, prefixIds, stateCache) ? prefixIds.length - start.reused : 0;
  return {
    response: {
      id: `ext_${requestId()}`,
      object: 'extraction',
      model: modelVersion(lm),
      provider: lm.device,
      answers,
      usage: {
        input_tokens: fed + start.reused,
        output_tokens: output,
        cost: 0,
        input_tokens_details: { cached_tokens: start.reused, cache_write_tokens: written },
      },
    },
    prefixIds,
    traces,
    cachedTokens: start.reused,
    cacheWriteTokens: written,
  };
}
