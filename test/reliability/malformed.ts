/**
 * A seeded generator of malformed requests for both endpoints. Each case breaks exactly one
 * thing in an otherwise valid request (which may also carry harmless extra fields, `__proto__`
 * and `constructor` keys among them), and says what the service must answer: status, code and
 * the `param` naming the field at fault (null where no field is: a body that is not an object,
 * invalid JSON, a wrong content type, a body past the size limit).
 *
 * A case has two forms. `body` is what a caller of the facade passes (it may hold NaN, Infinity
 * or own `__proto__` keys); `text` is the HTTP body, `JSON.stringify(body)` unless the fault lives
 * in the text itself (`NaN` and `Infinity` written as JSON, which is invalid JSON; `1e999`, which
 * parses to Infinity; truncated text; bytes that are not UTF-8). Faults that only HTTP can carry
 * have no `facade` expectation. Pure TypeScript, so the browser tests use it as well.
 */
import { formatParam, limits, type ErrorCode, type PathSegment } from '../../src/contract/index.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

export type Endpoint = 'decisions' | 'chat';

export interface Expected {
  status: number;
  code: ErrorCode;
  param: string | null;
}

export interface MalformedCase {
  index: number;
  endpoint: Endpoint;
  /** The fault's name, e.g. `decisions/question-type`. */
  fault: string;
  /** The body as a facade caller passes it; absent for text-only faults. */
  body?: unknown;
  /** What the facade answers for `body`; absent when the fault exists only on the wire. */
  facade?: Expected;
  /** The HTTP body: a string, or bytes (invalid UTF-8). */
  text: string | Uint8Array<ArrayBuffer>;
  contentType: string;
  http: Expected;
}

export const PATHS: Record<Endpoint, string> = {
  decisions: '/inference/jev/api/alpha/decisions',
  chat: '/v1/chat/completions',
};

/** The project's seeded generator (src/engine/runtime/seeded-random.ts). */
export const rng = seededRandom;

type Rand = {
  next: () => number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
};

function rand(seed: number): Rand {
  const next = rng(seed);
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

const bad400 = (path: readonly PathSegment[] | null): Expected => ({ status: 400, code: 'invalid_request', param: path === null ? null : formatParam(path) });
const notFound = (): Expected => ({ status: 404, code: 'model_not_found', param: 'model' });
const invalidJson: Expected = { status: 400, code: 'invalid_json', param: null };

/** Sets an own, enumerable property, even `__proto__`. */
function setOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function nest(levels: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = asArray ? [v] : { deeper: v };
  return v;
}

/** Levels past what any recursive walk survives: refused by the body's bounded walk (body-bounds.ts). */
const VERY_DEEP = [limits.maxBodyDepth + 1, 5_000, 20_000, 100_000] as const;

/** `JSON.stringify(body)` with `field` nested `levels` deep, written by hand (stringify would overflow). */
function withDeep(body: Record<string, unknown>, set: (deep: unknown) => void, levels: number, asArray: boolean): string {
  const marker = '__jev_deep__';
  set(marker);
  const text = JSON.stringify(body);
  set(nest(levels, 'leaf', asArray));
  const [open, close] = asArray ? ['[', ']'] : ['{"deeper":', '}'];
  return text.replace(JSON.stringify(marker), `${open.repeat(levels)}"leaf"${close.repeat(levels)}`);
}

/**
 * 10 MB of text, made once, when the module loads: a page that holds the generator holds it from
 * the start. Made at its first use instead, it appeared in the soak's page heap as a step of
 * exactly 10 MiB at the first body that asked for it (request 7,500 of seed 20261126), and in the
 * renderer's RSS as a +6 % step over the level taken at request 100 (docs/reliability.md).
 */
const TEN_MEGABYTES = 'ten megabytes of text. '.repeat(Math.ceil((10 * 1024 * 1024) / 23)).slice(0, 10 * 1024 * 1024);
function huge10MB(): string {
  return TEN_MEGABYTES;
}

const QUESTION_KEYS = ['urgent', 'team', 'mood', 'is it spam?', 'constructor', 'toString', 'très bien', '1', 'q_2', 'hasOwnProperty', 'valueOf', '日本語'];
const OPTION_KEYS = ['billing', 'tech', 'sales', 'other team', 'constructor', '0', 'yes', 'no', 'toString'];
const STATES = ['My invoice was charged twice.', 'The app crashes when I open settings.', 'Thanks, all good now!', 'Where is my parcel?'];
const WRONG_TYPES: readonly unknown[] = [5, -1.5, true, false, null, [], [1, 2], {}, { a: 1 }];
const NOT_STRINGS: readonly unknown[] = [5, 0, true, null, [], ['x'], {}, { text: 'x' }];
const NOT_OBJECTS: readonly unknown[] = ['x', '', 5, true, null, [], ['a']];
const NOT_BOOLEANS: readonly unknown[] = ['yes', 'true', 1, 0, {}, []];
/** Numbers JSON cannot carry: as text they are written as the bare words (invalid JSON). */
const NON_FINITE = [NaN, Infinity, -Infinity] as const;

function question(r: Rand, type: 'noul' | 'choice' | 'score'): Record<string, unknown> {
  switch (type) {
    case 'noul':
      return r.chance(0.5)
        ? { type, instructions: 'Is it urgent?', criteria: { true: 'It is urgent', false: 'It can wait' } }
        : { type, instructions: 'Is it urgent?' };
    case 'choice': {
      const n = 2 + r.int(3);
      const keys = [...OPTION_KEYS].sort(() => r.next() - 0.5).slice(0, n);
      return { type, instructions: 'Which team?', criteria: Object.fromEntries(keys.map((k) => [k, r.chance(0.2) ? null : `Option ${k}`])) };
    }
    case 'score':
      return { type, instructions: 'How angry?', criteria: ['calm', 'annoyed', 'angry', 'furious'].slice(0, 2 + r.int(3)) };
  }
}

function validDecision(r: Rand): { body: Record<string, unknown>; keys: string[] } {
  const n = 1 + r.int(4);
  const keys = [...QUESTION_KEYS].sort(() => r.next() - 0.5).slice(0, n);
  const questions: Record<string, unknown> = {};
  for (const k of keys) questions[k] = question(r, r.pick(['noul', 'choice', 'score'] as const));
  const body: Record<string, unknown> = { model: 'jev', state: r.pick(STATES), questions };
  if (r.chance(0.3)) body['calibrate'] = r.chance(0.5);
  return { body, keys };
}

function validChat(r: Rand): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  if (r.chance(0.3)) messages.push({ role: 'system', content: 'Be brief.' });
  const turns = 1 + r.int(3);
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: r.pick(STATES) });
    if (i < turns - 1) messages.push({ role: 'assistant', content: 'Noted.' });
  }
  const body: Record<string, unknown> = { model: 'jev', messages, temperature: 0, max_tokens: 4 };
  if (r.chance(0.3)) body['stream'] = r.chance(0.5);
  return body;
}

/** Extra fields the contract ignores, added to valid parts of the body (never to the one at fault). */
function addNoise(r: Rand, body: Record<string, unknown>, endpoint: Endpoint): void {
  const extras: [string, unknown][] = [
    ['user', 'someone'],
    ['metadata', { tag: 'x', nested: { deeper: [1, 2, 3] } }],
    ['__proto__', { polluted: true }],
    ['constructor', { prototype: { polluted: true } }],
    ['frequency_penalty', 0.5],
    ['x-extra', [null, true, 'y']],
  ];
  const count = r.int(3);
  for (let i = 0; i < count; i++) {
    const [k, v] = r.pick(extras);
    if (!Object.hasOwn(body, k)) setOwn(body, k, structuredClone(v));
  }
  if (endpoint === 'chat' && r.chance(0.2) && Array.isArray(body['messages'])) {
    const m = body['messages'][0];
    if (m && typeof m === 'object' && !Array.isArray(m)) setOwn(m, 'name', 'alice');
  }
}

/** A fault: mutates a valid body, returns what the facade and HTTP must answer. */
type Fault = {
  name: string;
  weight: number;
  apply(r: Rand, body: Record<string, unknown>, keys: string[]): FaultResult;
};

type FaultResult = {
  expected: Expected;
  /** The HTTP form, where it differs from JSON.stringify(body). */
  text?: string | Uint8Array<ArrayBuffer>;
  http?: Expected;
  contentType?: string;
  /** The fault cannot be passed to the facade (it lives in the wire text). */
  wireOnly?: boolean;
};

/** Writes a non-finite number as the word JSON does not allow (`NaN`, `Infinity`, `-Infinity`). */
function withNonFinite(body: unknown, value: number): string {
  const marker = '"__jev_non_finite__"';
  return JSON.stringify(body, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? '__jev_non_finite__' : v)).replace(marker, String(value));
}

const typeOf = (r: Rand, body: Record<string, unknown>, key: string): string => {
  const q = (body['questions'] as Record<string, Record<string, unknown>>)[key]!;
  void r;
  return q['type'] as string;
};

/** The key of a question of the given type, turning one into that type if none is. */
function questionOf(r: Rand, body: Record<string, unknown>, keys: string[], type: 'noul' | 'choice' | 'score'): string {
  const qs = body['questions'] as Record<string, unknown>;
  const found = keys.find((k) => typeOf(r, body, k) === type);
  if (found) return found;
  const k = r.pick(keys);
  qs[k] = question(r, type);
  return k;
}

const DECISION_FAULTS: Fault[] = [
  { name: 'model-missing', weight: 2, apply: (_r, b) => (delete b['model'], { expected: bad400(['model']) }) },
  { name: 'model-type', weight: 3, apply: (r, b) => ((b['model'] = r.pick(WRONG_TYPES)), { expected: bad400(['model']) }) },
  { name: 'model-unknown', weight: 3, apply: (r, b) => ((b['model'] = r.pick(['gpt-4', 'JEV', 'jev ', '', 'tiny-random-llama'])), { expected: notFound() }) },
  { name: 'state-missing', weight: 2, apply: (_r, b) => (delete b['state'], { expected: bad400(['state']) }) },
  { name: 'state-type', weight: 3, apply: (r, b) => ((b['state'] = r.pick([5, true, false, null, -0])), { expected: bad400(['state']) }) },
  { name: 'state-empty', weight: 3, apply: (r, b) => ((b['state'] = r.pick(['', '   ', '\n\t ', [], {}, [{ type: 'text', text: ' ' }]])), { expected: bad400(['state']) }) },
  {
    name: 'state-huge',
    weight: 1,
    apply: (r, b) => ((b['state'] = r.chance(0.15) ? huge10MB() : 'x'.repeat(limits.maxStateChars + 1 + r.int(1000))), { expected: bad400(['state']) }),
  },
  { name: 'state-deep', weight: 2, apply: (r, b) => ((b['state'] = nest(limits.maxDepth + 1 + r.int(200), 'leaf', r.chance(0.5))), { expected: bad400(['state']) }) },
  {
    name: 'state-very-deep',
    weight: 1,
    apply: (r, b) => ({ expected: bad400(['state']), text: withDeep(b, (v) => (b['state'] = v), r.pick(VERY_DEEP), r.chance(0.5)) }),
  },
  {
    name: 'state-non-finite',
    weight: 2,
    apply: (r, b) => {
      const value = r.pick(NON_FINITE);
      b['state'] = { ticket: 'refund', score: value };
      return { expected: bad400(['state', 'score']), text: withNonFinite(b, value), http: invalidJson };
    },
  },
  {
    name: 'state-1e999',
    weight: 1,
    apply: (_r, b) => {
      b['state'] = { ticket: 'refund', score: 1 };
      // Valid JSON that parses to Infinity: refused where it sits.
      return { expected: bad400(['state', 'score']), text: JSON.stringify(b).replace('"score":1', '"score":1e999'), wireOnly: true, http: bad400(['state', 'score']) };
    },
  },
  { name: 'questions-missing', weight: 2, apply: (_r, b) => (delete b['questions'], { expected: bad400(['questions']) }) },
  { name: 'questions-type', weight: 3, apply: (r, b) => ((b['questions'] = r.pick(NOT_OBJECTS)), { expected: bad400(['questions']) }) },
  { name: 'questions-empty', weight: 1, apply: (_r, b) => ((b['questions'] = {}), { expected: bad400(['questions']) }) },
  {
    name: 'questions-too-many',
    weight: 1,
    apply: (r, b) => {
      const n = r.chance(0.3) ? 10_000 : limits.maxQuestions + 1 + r.int(50);
      b['questions'] = Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, { type: 'noul', instructions: `Question ${i}?` }]));
      return { expected: bad400(['questions']) };
    },
  },
  {
    name: 'question-key',
    weight: 2,
    apply: (r, b) => {
      const qs = b['questions'] as Record<string, unknown>;
      const which = r.int(3);
      if (which === 0) return (qs[''] = question(r, 'noul')), { expected: bad400(['questions', '']) };
      if (which === 1) return setOwn(qs, '__proto__', question(r, 'noul')), { expected: bad400(['questions', '__proto__']) };
      return (qs['k'.repeat(limits.maxKeyChars + 1)] = question(r, 'noul')), { expected: bad400(['questions']) };
    },
  },
  {
    name: 'question-type-of-value',
    weight: 2,
    apply: (r, b, keys) => {
      const k = r.pick(keys);
      (b['questions'] as Record<string, unknown>)[k] = r.pick(['noul', 5, true, null, [], [{ type: 'noul' }]]);
      return { expected: bad400(['questions', k]) };
    },
  },
  {
    name: 'question-type',
    weight: 4,
    apply: (r, b, keys) => {
      const k = r.pick(keys);
      const q = (b['questions'] as Record<string, Record<string, unknown>>)[k]!;
      if (r.chance(0.3)) delete q['type'];
      else q['type'] = r.pick(['maybe', 'boolean', 'NOUL', 'score ', 5, null, true, ['noul']]);
      return { expected: bad400(['questions', k, 'type']) };
    },
  },
  {
    name: 'question-instructions',
    weight: 3,
    apply: (r, b, keys) => {
      const k = r.pick(keys);
      const q = (b['questions'] as Record<string, Record<string, unknown>>)[k]!;
      q['instructions'] = r.chance(0.2) ? 'i'.repeat(limits.maxTextChars + 1) : r.pick([5, true, {}, [], ['Is it?']]);
      return { expected: bad400(['questions', k, 'instructions']) };
    },
  },
  {
    name: 'noul-criteria',
    weight: 3,
    apply: (r, b, keys) => {
      const k = questionOf(r, b, keys, 'noul');
      const q = (b['questions'] as Record<string, Record<string, unknown>>)[k]!;
      const which = r.int(3);
      if (which === 0) return (q['criteria'] = r.pick(['yes', 5, [], ['a', 'b'], true])), { expected: bad400(['questions', k, 'criteria']) };
      if (which === 1) {
        const extra = r.pick(['maybe', 'yes', 'True', '__proto__']);
        const criteria = { true: 'yes', false: 'no' };
        setOwn(criteria, extra, 'perhaps');
        q['criteria'] = criteria;
        return { expected: bad400(['questions', k, 'criteria', extra]) };
      }
      const side = r.pick(['true', 'false']);
      q['criteria'] = { true: 'yes', false: 'no', [side]: r.pick([5, true, {}, ['x']]) };
      return { expected: bad400(['questions', k, 'criteria', side]) };
    },
  },
  {
    name: 'choice-criteria',
    weight: 4,
    apply: (r, b, keys) => {
      const k = questionOf(r, b, keys, 'choice');
      const q = (b['questions'] as Record<string, Record<string, unknown>>)[k]!;
      const at = (...rest: PathSegment[]) => bad400(['questions', k, 'criteria', ...rest]);
      switch (r.int(6)) {
        case 0:
          delete q['criteria'];
          return { expected: at() };
        case 1:
          q['criteria'] = r.pick(['billing', 5, null, ['billing', 'tech'], true]);
          return { expected: at() };
        case 2:
          q['criteria'] = r.chance(0.5) ? {} : { only: 'one option' };
          return { expected: at() };
        case 3:
          q['criteria'] = Object.fromEntries(Array.from({ length: limits.maxOptions + 1 + r.int(500) }, (_, i) => [`o${i}`, null]));
          return { expected: at() };
        case 4: {
          const criteria = { ...(q['criteria'] as object) } as Record<string, unknown>;
          const opt = Object.keys(criteria)[0]!;
          criteria[opt] = r.pick([5, true, {}, ['x']]);
          q['criteria'] = criteria;
          return { expected: at(opt) };
        }
        default: {
          const criteria = { a: 'first', b: 'second' };
          const bad = r.pick(['', '__proto__']);
          setOwn(criteria, bad, 'third');
          q['criteria'] = criteria;
          return { expected: at(bad) };
        }
      }
    },
  },
  {
    name: 'score-criteria',
    weight: 4,
    apply: (r, b, keys) => {
      const k = questionOf(r, b, keys, 'score');
      const q = (b['questions'] as Record<string, Record<string, unknown>>)[k]!;
      const at = (...rest: PathSegment[]) => bad400(['questions', k, 'criteria', ...rest]);
      switch (r.int(5)) {
        case 0:
          delete q['criteria'];
          return { expected: at() };
        case 1:
          q['criteria'] = r.pick(['low,high', { 0: 'low', 1: 'high' }, 5, null, true]);
          return { expected: at() };
        case 2:
          q['criteria'] = r.chance(0.5) ? [] : ['only'];
          return { expected: at() };
        case 3:
          q['criteria'] = Array.from({ length: limits.maxGrades + 1 + r.int(400) }, (_, i) => `${i}`);
          return { expected: at() };
        default: {
          const labels = ['low', 'mid', 'high'];
          const i = r.int(3);
          (labels as unknown[])[i] = r.pick(['', 5, null, {}, ['x']]);
          q['criteria'] = labels;
          return { expected: at(i) };
        }
      }
    },
  },
  { name: 'calibrate', weight: 2, apply: (r, b) => ((b['calibrate'] = r.pick(NOT_BOOLEANS)), { expected: bad400(['calibrate']) }) },
  {
    name: 'chat-body-here',
    weight: 1,
    apply: (_r, b) => {
      delete b['questions'];
      b['messages'] = [{ role: 'user', content: 'hi' }];
      return { expected: bad400(['messages']) };
    },
  },
];

const CHAT_FAULTS: Fault[] = [
  {
    name: 'content-very-deep',
    weight: 1,
    apply: (r, b) => {
      const m = (b['messages'] as Record<string, unknown>[])[0]!;
      return { expected: bad400(['messages', 0, 'content']), text: withDeep(b, (v) => (m['content'] = v), r.pick(VERY_DEEP), true) };
    },
  },
  { name: 'model-missing', weight: 2, apply: (_r, b) => (delete b['model'], { expected: bad400(['model']) }) },
  { name: 'model-type', weight: 3, apply: (r, b) => ((b['model'] = r.pick([...WRONG_TYPES, ''])), { expected: bad400(['model']) }) },
  { name: 'model-long', weight: 1, apply: (_r, b) => ((b['model'] = 'm'.repeat(limits.maxKeyChars + 1)), { expected: bad400(['model']) }) },
  { name: 'model-unknown', weight: 3, apply: (r, b) => ((b['model'] = r.pick(['gpt-4', 'jev2', 'JEV', 'tiny'])), { expected: notFound() }) },
  { name: 'messages-missing', weight: 2, apply: (_r, b) => (delete b['messages'], { expected: bad400(['messages']) }) },
  { name: 'messages-type', weight: 3, apply: (r, b) => ((b['messages'] = r.pick(['hi', 5, null, {}, { role: 'user', content: 'hi' }, true, []])), { expected: bad400(['messages']) }) },
  {
    name: 'messages-too-many',
    weight: 1,
    apply: (_r, b) => ((b['messages'] = Array.from({ length: limits.maxMessages + 1 }, () => ({ role: 'user', content: 'hi' }))), { expected: bad400(['messages']) }),
  },
  {
    name: 'message',
    weight: 8,
    apply: (r, b) => {
      const messages = b['messages'] as unknown[];
      const i = r.int(messages.length);
      const at = (...rest: PathSegment[]) => bad400(['messages', i, ...rest]);
      const m = { ...(messages[i] as object) } as Record<string, unknown>;
      switch (r.int(9)) {
        case 0:
          messages[i] = r.pick(['hi', 5, null, [], true]);
          return { expected: at() };
        case 1:
          delete m['role'];
          messages[i] = m;
          return { expected: at('role') };
        case 2:
          m['role'] = r.pick(['bot', 'User', 'Tool', 'function', 5, null, '']);
          messages[i] = m;
          return { expected: at('role') };
        case 3:
          delete m['content'];
          messages[i] = m;
          return { expected: at('content') };
        case 4:
          m['content'] = r.pick([5, true, {}, null, { type: 'text', text: 'x' }]);
          messages[i] = m;
          return { expected: at('content') };
        case 5: {
          const j = r.int(2);
          const parts: unknown[] = [{ type: 'text', text: 'look:' }, { type: 'text', text: 'here' }];
          const which = r.int(4);
          parts[j] = [{ type: 'image_url', image_url: { url: 'https://x.invalid/a.png' } }, { text: 'no type' }, { type: 'text', text: 5 }, 'plain'][which];
          m['content'] = parts;
          messages[i] = m;
          return { expected: at('content', j, ...(which === 3 ? [] : which === 2 ? ['text'] : ['type'])) };
        }
        case 6:
          m['content'] = r.chance(0.15) ? huge10MB() : 'c'.repeat(limits.maxMessageChars + 1);
          messages[i] = m;
          return { expected: at('content') };
        case 7: {
          const value = r.pick(NON_FINITE);
          m['content'] = value;
          messages[i] = m;
          return { expected: at('content'), text: withNonFinite(b, value), http: invalidJson };
        }
        default:
          m['content'] = [];
          m['role'] = 7;
          messages[i] = m;
          return { expected: at('role') };
      }
    },
  },
  {
    name: 'temperature',
    weight: 3,
    apply: (r, b) => {
      if (r.chance(0.35)) {
        const value = r.pick(NON_FINITE);
        b['temperature'] = value;
        return { expected: bad400(['temperature']), text: withNonFinite(b, value), http: invalidJson };
      }
      b['temperature'] = r.pick([-0.1, 2.01, 3, 100, -1e9, 'hot', '0.5', true, {}, []]);
      return { expected: bad400(['temperature']) };
    },
  },
  {
    name: 'temperature-1e999',
    weight: 1,
    apply: (_r, b) => {
      b['temperature'] = 0;
      return { expected: bad400(['temperature']), text: JSON.stringify(b).replace('"temperature":0', '"temperature":1e999'), wireOnly: true, http: bad400(['temperature']) };
    },
  },
  { name: 'top_p', weight: 2, apply: (r, b) => ((b['top_p'] = r.pick([0, -0.5, 1.01, 2, 'x', true, []])), { expected: bad400(['top_p']) }) },
  {
    name: 'max_tokens',
    weight: 3,
    apply: (r, b) => {
      const field = r.pick(['max_tokens', 'max_completion_tokens']);
      if (field === 'max_completion_tokens') delete b['max_tokens'];
      b[field] = r.pick([0, -5, 1.5, 'ten', true, {}, 2 ** 60]);
      return { expected: bad400([field]) };
    },
  },
  { name: 'max_tokens-conflict', weight: 1, apply: (_r, b) => ((b['max_tokens'] = 4), (b['max_completion_tokens'] = 5), { expected: bad400(['max_completion_tokens']) }) },
  { name: 'stream', weight: 2, apply: (r, b) => ((b['stream'] = r.pick(NOT_BOOLEANS)), { expected: bad400(['stream']) }) },
  {
    name: 'stream_options',
    weight: 2,
    apply: (r, b) => {
      if (r.chance(0.5)) return (b['stream_options'] = r.pick(['usage', 5, true, []])), { expected: bad400(['stream_options']) };
      b['stream_options'] = { include_usage: r.pick(NOT_BOOLEANS) };
      return { expected: bad400(['stream_options', 'include_usage']) };
    },
  },
  {
    name: 'stop',
    weight: 3,
    apply: (r, b) => {
      switch (r.int(5)) {
        case 0:
          b['stop'] = r.pick([5, true, {}, '']);
          return { expected: bad400(['stop']) };
        case 1:
          b['stop'] = ['a', 'b', 'c', 'd', 'e', 'f'].slice(0, limits.maxStop + 1 + r.int(2));
          return { expected: bad400(['stop']) };
        case 2: {
          const i = r.int(3);
          const stops: unknown[] = ['\n', 'END', '###'];
          stops[i] = r.pick(['', 5, null, ['x']]);
          b['stop'] = stops;
          return { expected: bad400(['stop', i]) };
        }
        case 3:
          b['stop'] = 's'.repeat(limits.maxTextChars + 1);
          return { expected: bad400(['stop']) };
        default:
          b['stop'] = ['ok', 's'.repeat(limits.maxTextChars + 1)];
          return { expected: bad400(['stop', 1]) };
      }
    },
  },
  { name: 'seed', weight: 2, apply: (r, b) => ((b['seed'] = r.pick([1.5, 'x', true, {}, 1e20])), { expected: bad400(['seed']) }) },
  { name: 'n', weight: 2, apply: (r, b) => ((b['n'] = r.pick([2, 0, -1, 1.5, 'x', true])), { expected: bad400(['n']) }) },
  { name: 'logprobs', weight: 1, apply: (r, b) => ((b['logprobs'] = r.pick(NOT_BOOLEANS)), { expected: bad400(['logprobs']) }) },
  {
    name: 'top_logprobs',
    weight: 2,
    apply: (r, b) => {
      if (r.chance(0.5)) {
        b['logprobs'] = true;
        b['top_logprobs'] = r.pick([limits.maxTopLogprobs + 1, -1, 1.5, 'x']);
      } else {
        b['top_logprobs'] = 3;
        if (r.chance(0.5)) b['logprobs'] = false;
      }
      return { expected: bad400(['top_logprobs']) };
    },
  },
  { name: 'truncation', weight: 1, apply: (r, b) => ((b['truncation'] = r.pick(['none', 'middle', 5, true, ''])), { expected: bad400(['truncation']) }) },
  {
    name: 'decision-body-here',
    weight: 1,
    apply: (r, b) => {
      delete b['messages'];
      const field = r.pick(['questions', 'state']);
      b[field] = field === 'state' ? 'x' : { q: { type: 'noul' } };
      return { expected: bad400([field]) };
    },
  },
];

/** Faults of the whole body, the same for both endpoints. */
const BODY_FAULTS: Fault[] = [
  {
    // An extra field the contract would ignore is still bounded: nothing walks a body past its depth.
    name: 'extra-field-very-deep',
    weight: 1,
    apply: (r, b) => ({ expected: bad400(['metadata']), text: withDeep(b, (v) => (b['metadata'] = v), r.pick(VERY_DEEP), r.chance(0.5)) }),
  },
  {
    name: 'body-not-object',
    weight: 3,
    apply: (r) => {
      const [value, text] = r.pick<[unknown, string]>([
        [null, 'null'],
        [[], '[]'],
        ['jev', '"jev"'],
        [5, '5'],
        [true, 'true'],
        [[{ model: 'jev' }], '[{"model":"jev"}]'],
      ]);
      return { expected: bad400(null), text, replaceBody: value } as FaultResult & { replaceBody: unknown };
    },
  },
  {
    name: 'invalid-json',
    weight: 5,
    apply: (r, b) => {
      const json = JSON.stringify(b);
      const broken = r.pick([
        () => json.slice(0, r.int(json.length)),
        () => json.replace(/}$/, ',}'),
        () => json.replace(/"/g, "'"),
        () => `${json} trailing`,
        () => json.replace('{', '{ // a comment\n'),
        () => json.replace(/:/, ': undefined, "x":'),
        () => '',
        () => '{"model": NaN}',
        () => json.replace('"jev"', 'jev'),
      ])();
      return { expected: invalidJson, text: broken, wireOnly: true };
    },
  },
  {
    name: 'not-utf8',
    weight: 1,
    apply: (_r, b) => {
      const bytes = new TextEncoder().encode(JSON.stringify(b));
      const out = new Uint8Array(bytes.length + 2);
      out.set(bytes.subarray(0, 10));
      out.set([0xc3, 0x28], 10); // an invalid two-byte sequence
      out.set(bytes.subarray(10), 12);
      return { expected: invalidJson, text: out, wireOnly: true };
    },
  },
  {
    name: 'content-type',
    weight: 1,
    apply: (r) => ({
      expected: { status: 415, code: 'unsupported_media_type', param: null },
      contentType: r.pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']),
      wireOnly: true,
    }),
  },
];

function pickFault(r: Rand, faults: readonly Fault[]): Fault {
  const total = faults.reduce((s, f) => s + f.weight, 0);
  let x = r.next() * total;
  for (const f of faults) {
    x -= f.weight;
    if (x < 0) return f;
  }
  return faults[faults.length - 1]!;
}

/**
 * `count` cases, alternating endpoints, from `seed`. Lazy: a 10 MB body exists only while its
 * case is being served.
 */
export function* malformedCases(seed: number, count: number, options: { oversized?: number } = {}): Generator<MalformedCase> {
  const r = rand(seed);
  // A few bodies past the 32 MiB limit (413): each costs 33 MB of text, so only a handful.
  const oversizedAt = new Set(Array.from({ length: options.oversized ?? 0 }, () => r.int(count)));
  for (let index = 0; index < count; index++) {
    const endpoint: Endpoint = index % 2 === 0 ? 'decisions' : 'chat';
    const faults = [...(endpoint === 'decisions' ? DECISION_FAULTS : CHAT_FAULTS), ...BODY_FAULTS];
    const base = endpoint === 'decisions' ? validDecision(r) : { body: validChat(r), keys: [] };
    let body: unknown = base.body;
    addNoise(r, base.body, endpoint);
    if (oversizedAt.has(index)) {
      const text = `{"model":"jev","state":"${'x'.repeat(limits.maxBodyBytes)}"}`;
      yield { index, endpoint, fault: `${endpoint}/body-too-large`, text, contentType: 'application/json', http: { status: 413, code: 'payload_too_large', param: null } };
      continue;
    }
    const fault = pickFault(r, faults);
    const result = fault.apply(r, base.body, base.keys) as FaultResult & { replaceBody?: unknown };
    if ('replaceBody' in result) body = result.replaceBody;
    const text = result.text ?? JSON.stringify(body);
    const item: MalformedCase = {
      index,
      endpoint,
      fault: `${endpoint}/${fault.name}`,
      text,
      contentType: result.contentType ?? 'application/json',
      http: result.http ?? result.expected,
    };
    if (!result.wireOnly) {
      item.body = body;
      item.facade = result.expected;
    }
    yield item;
  }
}

/** Valid requests served before and after a storm: their answers must not change. */
export const PROBE_DECISION = {
  model: 'jev',
  state: 'My invoice was charged twice and I want a refund today.',
  questions: {
    urgent: { type: 'noul', instructions: 'Is it urgent?' },
    team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Invoices', tech: 'Bugs', sales: null } },
    mood: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'angry'] },
  },
} as const;

export const PROBE_CHAT = { model: 'jev', messages: [{ role: 'user', content: 'Say something.' }], temperature: 0, max_tokens: 12 } as const;
