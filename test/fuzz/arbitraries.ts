/**
 * fast-check arbitraries of request bodies, derived from the contract's request schemas
 * (src/contract/decision-request.ts, question.ts, state.ts, chat-request.ts, chat-message.ts):
 * valid bodies within the schemas' limits, and one-field mutations of them — a field removed, its
 * value replaced by any other JSON value or by a structural attack (nesting past any recursive walk,
 * wide arrays, many keys, long strings, odd Unicode), or an unknown field added. Pure TypeScript,
 * so the browser tests bundle it too (test/reliability/browser-harness.ts).
 */
import fc from 'fast-check';
import { limits, type PathSegment } from '../../src/contract/index.ts';

/** `decisions_openai`: OpenAI's Decisions shape at `/v1/decisions` (src/contract/openai-decision-request.ts). */
export type Endpoint = 'decisions' | 'decisions_openai' | 'extractions' | 'chat';
type Json = unknown;

const word = fc.stringMatching(/^[A-Za-z][a-z]{0,9}$/);
const sentence = fc.array(word, { minLength: 1, maxLength: 8 }).map((ws) => `${ws.join(' ')}.`);
const key = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);

const state = fc.oneof(
  sentence,
  fc.array(sentence.map((text) => ({ type: 'text', text })), { minLength: 1, maxLength: 3 }),
  fc.dictionary(key, fc.oneof(sentence, fc.integer({ min: -1000, max: 1000 }), fc.boolean(), fc.constant(null)), { minKeys: 1, maxKeys: 4 }),
);

const noul = fc.record(
  { type: fc.constant('noul'), instructions: sentence, criteria: fc.record({ true: sentence, false: sentence }, { requiredKeys: [] }) },
  { requiredKeys: ['type', 'instructions'] },
);
const choice = fc.record({
  type: fc.constant('choice'),
  instructions: sentence,
  criteria: fc.dictionary(key, fc.option(sentence, { nil: null }), { minKeys: limits.minOptions, maxKeys: 4 }),
});
const score = fc.record({
  type: fc.constant('score'),
  instructions: sentence,
  criteria: fc.uniqueArray(word, { minLength: limits.minGrades, maxLength: 5 }),
});

/** A valid decision request: 1–4 questions of every type. */
export const validDecision: fc.Arbitrary<Record<string, Json>> = fc.record(
  {
    model: fc.constant('jev'),
    state,
    questions: fc.dictionary(key, fc.oneof(noul, choice, score), { minKeys: 1, maxKeys: 4 }),
    calibrate: fc.boolean(),
  },
  { requiredKeys: ['model', 'state', 'questions'] },
);

const oaInstructions = fc.oneof(sentence, fc.array(sentence.map((text) => ({ type: 'input_text', text })), { minLength: 1, maxLength: 2 }));
const oaPredicate = fc.record({ type: fc.constant('predicate'), instructions: oaInstructions, name: key }, { requiredKeys: ['type', 'instructions'] });
const oaChoice = fc.record(
  {
    type: fc.constant('choice'),
    instructions: oaInstructions,
    name: key,
    choices: fc
      .uniqueArray(fc.oneof(word, fc.boolean(), fc.constantFrom('true', 'false')), { minLength: limits.minOptions, maxLength: 4, selector: (v) => `${typeof v}:${String(v)}` })
      .chain((values) => fc.tuple(...values.map((value) => fc.record({ value: fc.constant(value), description: sentence }, { requiredKeys: ['value'] })))),
  },
  { requiredKeys: ['type', 'instructions', 'choices'] },
);
const oaScore = fc.record(
  {
    type: fc.constant('score'),
    instructions: oaInstructions,
    name: key,
    levels: fc.uniqueArray(word, { minLength: limits.minGrades, maxLength: 5 }).chain((labels) => fc.tuple(...labels.map((label) => fc.record({ label: fc.constant(label), description: sentence }, { requiredKeys: ['label'] })))),
  },
  { requiredKeys: ['type', 'instructions', 'levels'] },
);
const oaMessage = fc.record({
  role: fc.constantFrom('system', 'user', 'developer', 'assistant'),
  content: sentence,
});
const oaInput = fc.oneof(
  sentence,
  fc.tuple(fc.array(oaMessage, { maxLength: 2 }), sentence, key, fc.dictionary(key, fc.oneof(sentence, fc.integer()), { maxKeys: 3 }), sentence).map(([messages, text, name, data, output]) => [
    ...messages,
    { role: 'user', content: [{ type: 'input_text', text }, { type: 'input_json', data }] },
    { type: 'function_call', call_id: 'call_1', name, arguments: JSON.stringify(data) },
    { type: 'function_call_output', call_id: 'call_1', output },
  ]),
);

/** A valid request of OpenAI's Decisions shape: 1–4 questions of every type (names made unique), a string or a transcript with a function call. */
export const validOpenAIDecision: fc.Arbitrary<Record<string, Json>> = fc.record(
  {
    model: fc.constant('jev'),
    input: oaInput,
    questions: fc.array(fc.oneof(oaPredicate, oaChoice, oaScore), { minLength: 1, maxLength: 4 }).map((qs) => qs.map((q, i) => ('name' in q ? { ...q, name: `${String(q.name)}_${i}` } : q))),
    prompt_cache_key: key,
    safety_identifier: key,
  },
  { requiredKeys: ['model', 'input', 'questions'] },
);

/** A field of an extraction request (src/contract/extraction-request.ts): every type, short values. */
const exField = fc.oneof(
  fc.record({ type: fc.constant('text'), instructions: sentence }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('number'), unit: word, integer: fc.boolean(), decimals: fc.integer({ min: 0, max: 6 }) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('date', 'time', 'datetime'), instructions: sentence }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('duration'), unit: fc.constantFrom('seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years'), decimals: fc.integer({ min: 0, max: 6 }) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('list'), items: fc.constantFrom('text', 'number', 'date') }, { requiredKeys: ['type', 'items'] }),
);

/** `extractions`: the extraction shape at `/v1/extractions` (src/contract/extraction-request.ts). */
export const validExtraction: fc.Arbitrary<Record<string, Json>> = fc.record(
  {
    model: fc.constant('jev'),
    state: fc.oneof(sentence, fc.array(sentence.map((text) => ({ type: 'text', text })), { minLength: 1, maxLength: 2 })),
    fields: fc.dictionary(key, exField, { minKeys: 1, maxKeys: 2 }),
    referenceDate: fc.constantFrom('2024-02-29', '2025-12-31', '1999-01-01'),
  },
  { requiredKeys: ['model', 'state', 'fields'] },
);

const message = fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'developer'), content: fc.oneof(sentence, fc.array(sentence.map((text) => ({ type: 'text', text })), { minLength: 1, maxLength: 2 })) });

/** A valid chat completion request, short (max_tokens ≤ 4, given twice) so that a served one costs little. */
export const validChat: fc.Arbitrary<Record<string, Json>> = fc
  .record(
    {
      model: fc.constant('jev'),
      messages: fc.array(message, { minLength: 0, maxLength: 3 }),
      last: sentence,
      max_tokens: fc.integer({ min: 1, max: 4 }),
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      top_p: fc.double({ min: 0.01, max: 1, noNaN: true }),
      seed: fc.integer({ min: 0, max: 2 ** 31 }),
      stream: fc.boolean(),
      stop: fc.array(word, { maxLength: limits.maxStop }),
      logprobs: fc.boolean(),
    },
    { requiredKeys: ['model', 'messages', 'last', 'max_tokens'] },
  )
  // max_completion_tokens repeats max_tokens, so that deleting either still bounds a served reply
  .map(({ last, ...body }) => ({ ...body, max_completion_tokens: body.max_tokens, messages: [...(body.messages as unknown[]), { role: 'user', content: last }] }));

/** Nested `levels` deep, built without recursion (a structure past any recursive walk). */
export function nest(levels: number, asArray: boolean): Json {
  let v: Json = 'leaf';
  for (let i = 0; i < levels; i++) v = asArray ? [v] : { deeper: v };
  return v;
}

const oddStrings = fc.constantFrom('', ' ', '\u0000', '\ufeff', '\ud800', '\udfff', 'a\ud800b', '\u0000'.repeat(64), '\ufeff{"model":"jev"}', '__proto__', 'constructor', '💥'.repeat(100));

/** Values that break the structure itself: depth past every bound, width, length, odd Unicode. */
export const structuralAttack: fc.Arbitrary<Json> = fc.oneof(
  fc.tuple(fc.integer({ min: limits.maxDepth - 1, max: 100_000 }), fc.boolean()).map(([levels, asArray]) => nest(levels, asArray)),
  fc.integer({ min: 1, max: 200_000 }).map((n) => new Array<number>(n).fill(0)),
  fc.integer({ min: 1, max: 50_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  fc.integer({ min: 1, max: 2_000_000 }).map((n) => 'x'.repeat(n)),
  oddStrings,
  fc.constantFrom(-0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2, 0.1 + 0.2),
);

/** Any other JSON value, small or an attack. */
const replacement: fc.Arbitrary<Json> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: structuralAttack },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, 1, -1, 1.5, '', 'jev', [], {}) },
);

export type Mutation =
  | { kind: 'replace'; path: PathSegment[]; value: Json }
  | { kind: 'delete'; path: PathSegment[] }
  | { kind: 'add'; path: PathSegment[]; value: Json };

/** Every path into a (small, valid) body, the body itself first. */
function pathsOf(v: Json, path: PathSegment[] = [], out: PathSegment[][] = []): PathSegment[][] {
  out.push(path);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...path, i], out));
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) pathsOf((v as Record<string, Json>)[k], [...path, k], out);
  return out;
}

/** One mutation of a body, at one of its paths. */
function mutationOf(body: Record<string, Json>): fc.Arbitrary<Mutation> {
  const paths = pathsOf(body);
  const at = fc.constantFrom(...paths);
  const inner = paths.filter((p) => p.length > 0);
  const containers = paths.filter((p) => {
    const v = get(body, p);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  });
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('replace' as const), path: at, value: replacement }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom(...inner) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('add' as const),
        path: fc.tuple(fc.constantFrom(...containers), fc.oneof(key, oddStrings)).map(([p, k]) => [...p, k]),
        value: replacement,
      }),
    },
  );
}

function get(root: Json, path: readonly PathSegment[]): Json {
  let cur = root;
  for (const seg of path) cur = (cur as Record<string | number, Json>)[seg];
  return cur;
}

/** The body with the mutation applied (a copy; the structural values are shared, never walked). */
export function applyMutation(body: Record<string, Json>, m: Mutation): Json {
  if (m.path.length === 0) return m.kind === 'delete' ? undefined : m.kind === 'replace' ? m.value : body;
  const copy = structuredClone(body);
  const parent = get(copy, m.path.slice(0, -1)) as Record<string | number, Json>;
  const last = m.path[m.path.length - 1]!;
  if (m.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else {
    Object.defineProperty(parent, last, { value: m.value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

export interface FuzzCase {
  endpoint: Endpoint;
  /** The valid body the mutation started from. */
  base: Record<string, Json>;
  mutation: Mutation;
}

/** A valid body of the endpoint and one mutation of it. */
export function fuzzCase(endpoint: Endpoint): fc.Arbitrary<FuzzCase> {
  const valid = { decisions: validDecision, decisions_openai: validOpenAIDecision, extractions: validExtraction, chat: validChat }[endpoint];
  return valid.chain((base) =>
    mutationOf(base).map((mutation) => ({ endpoint, base, mutation })),
  );
}

/** How a case is shown when it fails: the body as JSON, attacks summarised (a 100,000-level nest is not printed). */
export function describeCase(c: FuzzCase): string {
  const show = (v: Json): string => {
    const text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' && x.length > 200 ? `<string of ${x.length}>` : Array.isArray(x) && x.length > 50 ? `<array of ${x.length}>` : x));
    return text !== undefined && text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} chars)` : String(text);
  };
  const safe = (v: Json) => {
    try {
      return show(v);
    } catch {
      return '<nested too deep to print>';
    }
  };
  return `${c.endpoint}: ${c.mutation.kind} ${JSON.stringify(c.mutation.path)}${'value' in c.mutation ? ` = ${safe(c.mutation.value)}` : ''}\nbase: ${JSON.stringify(c.base)}`;
}
