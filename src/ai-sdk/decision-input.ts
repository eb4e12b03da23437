/**
 * The AI SDK's decision input (`Experimental_DecisionModelV4CallOptions`: state parts and typed
 * questions) as a Jev-shape decision request, the one the client's `decisions.create` reads.
 *
 * State, so that the same content gives the same prompt as the Jev shape, to the last token:
 * - one text part, or only text parts: their texts joined with "\n" (the Jev shape's rule for an
 *   array of text parts);
 * - one JSON part holding an object or array: that value, which the Jev shape renders as JSON with
 *   sorted keys (`experimental_decide({ state: {...} })` arrives as such a part), unless it is an
 *   array of `{type:'text'}` objects, which the Jev shape would read as text: that one is written
 *   as its JSON text here, as a JSON part should be;
 * - anything else (text and JSON mixed, a JSON scalar): each part as text (JSON parts rendered as
 *   the Jev shape renders a JSON state), joined with "\n";
 * - a file part: refused, naming it (`state[i]`); the loaded model reads text only.
 *
 * Questions: `boolean` is the Jev shape's `noul`; `choice` and `score` keep their names. An
 * instruction or description given as JSON (the AI SDK allows it) is written as its JSON text, keys
 * sorted; null stays null (the key alone is read, or the Jev shape says what is missing).
 */
import type {
  Experimental_DecisionModelV4Input as DecisionInput,
  Experimental_DecisionModelV4Question as DecisionQuestion,
  Experimental_DecisionModelV4State as DecisionState,
  JSONValue,
} from '@ai-sdk/provider';
import { isTextPart, renderState, type QuestionInput } from '../contract/index.ts';
import { invalidArgument, providerMessages } from './provider-errors.ts';

/** A JSON value with object keys sorted, recursively (key order never changes a prompt). */
function sortedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortedJson((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

const isContainer = (v: JSONValue): boolean => v !== null && typeof v === 'object';

/** An array of `{type:'text'}` objects: the Jev shape would read it as text parts, not as JSON. */
const looksLikeTextParts = (v: JSONValue): boolean => Array.isArray(v) && v.length > 0 && v.every(isTextPart);

/** One JSON part as the text the Jev shape would read for it as a whole state. */
function jsonPartText(value: JSONValue, index: number): string {
  if (!isContainer(value)) return JSON.stringify(value);
  if (looksLikeTextParts(value)) return JSON.stringify(sortedJson(value), null, 2);
  try {
    return renderState(value);
  } catch (e) {
    // Name the part: the Jev shape's param says where inside the value the problem sits.
    throw invalidArgument(`state[${index}]: ${(e as Error).message}`, `state[${index}]`);
  }
}

/** The Jev `state` for the AI SDK's state parts. */
export function decisionState(parts: DecisionState): unknown {
  parts.forEach((part, i) => {
    if (part.type === 'file') throw invalidArgument(providerMessages.fileState(i, part.mediaType), `state[${i}]`);
  });
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.type === 'text') return only.text;
  if (only?.type === 'json' && isContainer(only.value) && !looksLikeTextParts(only.value)) return only.value;
  return parts
    .map((part, i) => {
      switch (part.type) {
        case 'text':
          return part.text;
        case 'json':
          return jsonPartText(part.value, i);
        case 'file':
          throw invalidArgument(providerMessages.fileState(i, part.mediaType), `state[${i}]`);
        default: {
          const never: never = part;
          return never;
        }
      }
    })
    .join('\n');
}

/** An instruction or a description: a string as it is, JSON as its text (keys sorted), null/absent as null. */
function text(input: DecisionInput | null | undefined): string | null {
  if (input === undefined || input === null) return null;
  if (typeof input === 'string') return input;
  return JSON.stringify(sortedJson(input), null, 2);
}

function mapValues<T, U>(record: Readonly<Record<string, T>>, f: (v: T) => U): Record<string, U> {
  const out: Record<string, U> = {};
  for (const key of Object.keys(record)) out[key] = f(record[key]!);
  return out;
}

/** One AI SDK question as a Jev question; `box` is not among `supportedQuestionTypes`, so the AI SDK refuses it before the call. */
export function decisionQuestion(question: DecisionQuestion): QuestionInput {
  switch (question.type) {
    case 'boolean':
      return {
        type: 'noul',
        instructions: text(question.instructions),
        criteria: question.criteria ? { true: text(question.criteria.true), false: text(question.criteria.false) } : null,
      };
    case 'choice':
      return { type: 'choice', instructions: text(question.instructions), criteria: mapValues(question.criteria, text) };
    case 'score':
      // A null level is passed on: the Jev shape needs a label for every grade and says which one lacks it.
      return { type: 'score', instructions: text(question.instructions), criteria: question.criteria.map(text) as string[] };
    case 'box':
      throw invalidArgument('box questions need an image, and the loaded model reads text only.', 'questions');
    default: {
      const never: never = question;
      return never;
    }
  }
}
