/**
 * The decision `state`: the context to judge, rendered to the one text the engine reads.
 *
 * - A string is the text itself.
 * - An array whose every item is a text content part, `{"type":"text","text":"…"}` (what the
 *   Vercel AI SDK's Jev provider sends), is its texts joined with "\n". Other keys of a part
 *   (such as `providerOptions`) are ignored.
 * - Any other JSON object or array (accepted from the Jev ecosystem's clients) is rendered as
 *   JSON with object keys sorted recursively (by UTF-16 code units) and 2-space indentation, so
 *   key order never changes the prompt. As in `JSON.stringify`, an `undefined` member of an
 *   object is left out and one in an array is `null`. At most `limits.maxDepth` levels of
 *   nesting (`{}` is one level); non-JSON values (NaN, Infinity, functions, class instances,
 *   bigints) are refused, naming where they sit.
 *
 * The rendered text must contain something other than white space, and at most
 * `limits.maxStateChars` characters.
 */
import './zod-config.ts';
import { z } from 'zod';
import { limits } from './limits.ts';
import type { MessageArgs } from './messages.ts';
import type { PathSegment } from './param-path.ts';
import { addIssue, isPlainObject, parseWith } from './validation.ts';

export type TextPart = { type: 'text'; text: string };
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** What a caller may send as `state`. */
export type StateInput = string | readonly unknown[] | Readonly<Record<string, unknown>>;

type Problem =
  | { kind: 'stateTooDeep'; path: PathSegment[]; args: MessageArgs<'stateTooDeep'> }
  | { kind: 'stateNotJson'; path: PathSegment[]; args: MessageArgs<'stateNotJson'> };

class StateProblem extends Error {
  constructor(readonly problem: Problem) {
    super(problem.kind);
  }
}

export function isTextPart(v: unknown): v is TextPart {
  return isPlainObject(v) && v['type'] === 'text' && typeof v['text'] === 'string';
}

/** A copy with object keys sorted and null prototypes (a `__proto__` key stays an ordinary key). */
function sortedCopy(v: unknown, depth: number, path: PathSegment[]): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      if (Number.isFinite(v)) return v;
      throw new StateProblem({ kind: 'stateNotJson', path: [...path], args: [v] });
    case 'object':
      break;
    default:
      throw new StateProblem({ kind: 'stateNotJson', path: [...path], args: [v] });
  }
  if (v === null) return null;
  if (depth > limits.maxDepth) throw new StateProblem({ kind: 'stateTooDeep', path: [], args: [limits.maxDepth] });
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      path.push(i);
      out.push(item === undefined ? null : sortedCopy(item, depth + 1, path));
      path.pop();
    }
    return out;
  }
  if (!isPlainObject(v)) throw new StateProblem({ kind: 'stateNotJson', path: [...path], args: [v] });
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(v).sort()) {
    const item = v[key];
    if (item === undefined) continue;
    path.push(key);
    out[key] = sortedCopy(item, depth + 1, path);
    path.pop();
  }
  return out;
}

type Ctx = Parameters<Parameters<z.ZodType['superRefine']>[0]>[1];

/** A JSON object or array as the state renders it (keys sorted, 2-space indentation); null after reporting its problem to `ctx`. */
function jsonText(raw: unknown[] | Record<string, unknown>, ctx: Ctx): string | null {
  try {
    return JSON.stringify(sortedCopy(raw, 1, []), null, 2);
  } catch (e) {
    if (!(e instanceof StateProblem)) throw e;
    const { problem } = e;
    if (problem.kind === 'stateTooDeep') addIssue(ctx, problem.kind, problem.args, { path: problem.path });
    else addIssue(ctx, problem.kind, problem.args, { path: problem.path });
    return null;
  }
}

/**
 * A JSON object or array rendered as the state renders one (an empty one too: `{}`, `[]`), with
 * the same limits and problems named where they sit: OpenAI's `input_json` parts
 * (openai-decision-input.ts), through the decision's one renderer.
 */
export const jsonDataTextSchema = z.custom<unknown[] | Record<string, unknown>>().transform((raw: unknown, ctx): string => {
  if (!Array.isArray(raw) && !isPlainObject(raw)) {
    addIssue(ctx, 'wrongType', ['a JSON object or array', raw]);
    return z.NEVER;
  }
  return jsonText(raw, ctx) ?? z.NEVER;
});

export const stateSchema = z.custom<StateInput>().transform((raw: unknown, ctx): string => {
  let text: string;
  if (typeof raw === 'string') {
    text = raw;
  } else if (Array.isArray(raw) && raw.every(isTextPart)) {
    text = raw.map((part) => part.text).join('\n');
  } else if (Array.isArray(raw) || isPlainObject(raw)) {
    const json = jsonText(raw, ctx);
    if (json === null) return z.NEVER;
    text = json;
    if (Array.isArray(raw) ? raw.length === 0 : Object.keys(raw).length === 0) text = '';
  } else {
    if (raw === undefined) addIssue(ctx, 'required', []);
    else addIssue(ctx, 'stateWrongType', [raw]);
    return z.NEVER;
  }
  return boundedStateText(text, ctx);
});

/**
 * `text` as a state's text, or a problem where it is too long or blank: the last check of every
 * way a state is written (the Jev `state` here, OpenAI's `input`: openai-decision-input.ts).
 */
export function boundedStateText(text: string, ctx: z.RefinementCtx): string {
  if (text.length > limits.maxStateChars) {
    addIssue(ctx, 'stringTooLong', [limits.maxStateChars, text.length]);
    return z.NEVER;
  }
  if (text.trim() === '') {
    addIssue(ctx, 'stateEmpty', []);
    return z.NEVER;
  }
  return text;
}

const wrapped = z.object({ state: stateSchema });

/** Renders a state as the decision parser does; throws JevError (param `state…`) when invalid. */
export function renderState(state: unknown): string {
  return parseWith(wrapped, { state }).state;
}
