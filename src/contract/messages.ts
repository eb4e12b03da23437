/**
 * Every human-readable error message of the contract, in one table. Validation messages take
 * the offending field's path (`param`, e.g. `questions.mood.criteria[3]`) first and name it,
 * so a message read on its own says which field is wrong.
 */

/** How a received value is described in a message: its kind, never its (possibly huge) content. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return `an array of ${v.length} item${v.length === 1 ? '' : 's'}`;
  switch (typeof v) {
    case 'string': return v.length === 0 ? 'an empty string' : `a string of ${v.length} character${v.length === 1 ? '' : 's'}`;
    case 'number':
      if (Number.isNaN(v)) return 'NaN';
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
      return `the number ${v}`;
    case 'boolean': return `the boolean ${v}`;
    case 'bigint': return 'a bigint';
    case 'function': return 'a function';
    case 'symbol': return 'a symbol';
    default: {
      const kind = className(v);
      return kind ? `${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}` : 'an object';
    }
  }
}

/** The class of an object that is not a plain one (`Map`, `Date`, `Uint8Array`); null for a plain object or one that hides its class. */
function className(v: unknown): string | null {
  try {
    const proto = Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null;
    const name = proto?.constructor?.name;
    return proto && proto !== Object.prototype && typeof name === 'string' && /^[A-Za-z_$][\w$]*$/.test(name) ? name : null;
  } catch {
    return null;
  }
}

/** An error thrown while a value was read, as a message may quote it. */
function describeThrown(e: unknown): string {
  try {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return text.length > 120 ? `${text.slice(0, 120)}…` : text;
  } catch {
    return 'an error';
  }
}

/** A short quoted preview of a string value (keys, enum values), cut so messages stay small. */
export function quoteValue(s: string, max = 64): string {
  return JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);
}

/** "1 option", "2 options": `noun` is the plural, ending in "s". */
export function countNoun(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun.replace(/s$/, '') : noun}`;
}

const expectedNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  null: 'null',
};

export function expectedName(expected: string): string {
  return expectedNames[expected] ?? expected;
}

/** Messages of validation errors: `(param, ...details) => text`. */
export const validationMessages = {
  required: (param: string) => `'${param}' is required.`,
  wrongType: (param: string, expected: string, got: unknown) =>
    `'${param}' must be ${expected}, got ${describeValue(got)}.`,
  notFinite: (param: string, got: unknown) => `'${param}' must be a finite number, got ${describeValue(got)}.`,
  notInteger: (param: string, got: unknown) => `'${param}' must be an integer, got ${describeValue(got)}.`,
  emptyString: (param: string) => `'${param}' must not be empty.`,
  stringTooLong: (param: string, max: number, got: number) =>
    `'${param}' is too long: at most ${max} characters are allowed, got ${got}.`,
  tooFew: (param: string, min: number, got: number, noun: string) =>
    `'${param}' must have at least ${countNoun(min, noun)}, got ${got}.`,
  tooMany: (param: string, max: number, got: number, noun: string) =>
    `'${param}' must have at most ${countNoun(max, noun)}, got ${got}.`,
  numberTooSmall: (param: string, min: number, inclusive: boolean, got: unknown) =>
    `'${param}' must be ${inclusive ? 'at least' : 'greater than'} ${min}, got ${describeValue(got)}.`,
  numberTooBig: (param: string, max: number, inclusive: boolean, got: unknown) =>
    `'${param}' must be ${inclusive ? 'at most' : 'less than'} ${max}, got ${describeValue(got)}.`,
  oneOf: (param: string, allowed: readonly string[], got: unknown) =>
    `'${param}' must be one of ${allowed.map((a) => quoteValue(a)).join(', ')}, got ${typeof got === 'string' ? quoteValue(got) : describeValue(got)}.`,
  invalid: (param: string) => `'${param}' is invalid.`,

  // The whole body's shape (body-bounds.ts), checked before anything walks it recursively.
  bodyTooDeep: (param: string, max: number) =>
    `'${param}' is nested too deeply (or is circular): a request body may hold at most ${max} levels of objects and arrays.`,
  bodyTooLarge: (param: string, max: number) =>
    `'${param}' is too large: a request body may hold at most ${max} values (object members and array items) in all.`,
  unreadable: (param: string, thrown: unknown) =>
    `'${param}' cannot be read: reading it threw ${describeThrown(thrown)}; a request body holds only plain data (strings, numbers, booleans, null, arrays and plain objects).`,
  notJsonData: (param: string, got: unknown) =>
    `'${param}' is not JSON data: got ${describeValue(got)}; a request body holds only strings, numbers, booleans, null, arrays and plain objects.`,

  // Keys of caller-named maps (questions, choice options).
  emptyKey: (param: string, noun: string) => `'${param}': ${noun} keys must be non-empty strings.`,
  keyTooLong: (param: string, max: number, got: number) =>
    `A key of '${param}' is too long: keys may have at most ${max} characters, got ${got}.`,
  reservedKey: (param: string) =>
    `'${param}': the key "__proto__" is reserved and cannot be used as a question or option key.`,

  // Decision request.
  modelNotFound: (param: string, model: string) =>
    `The model ${quoteValue(model)} does not exist at the decision endpoint; '${param}' must be "jev".`,
  chatBodyAtDecisionEndpoint: (param: string) =>
    `This endpoint takes a decision request ({model, state, questions}), not a chat completion request: the body has '${param}' but no 'questions'. Send chat completions to /v1/chat/completions.`,
  stateEmpty: (param: string) => `'${param}' must not be empty: give the text, object or content parts to judge.`,
  stateWrongType: (param: string, got: unknown) =>
    `'${param}' must be a string, a JSON object or an array (such as text content parts), got ${describeValue(got)}.`,
  stateTooDeep: (param: string, max: number) =>
    `'${param}' is nested too deeply (or is circular): at most ${max} levels of objects and arrays are allowed.`,
  stateNotJson: (param: string, got: unknown) =>
    `'${param}' is not JSON data: got ${describeValue(got)}; only strings, finite numbers, booleans, null, arrays and plain objects are allowed.`,
  noulCriteriaKey: (param: string) =>
    `'${param}' is not allowed: the criteria of a noul question take only the keys "true" and "false".`,

  // Chat completion request.
  decisionBodyAtChatEndpoint: (param: string) =>
    `This is the chat completion endpoint: it takes {model, messages}, not a decision request. The body has '${param}' but no 'messages'; send decision requests to /inference/jev/api/alpha/decisions.`,
  onlyOneChoice: (param: string, got: unknown) => `'${param}' must be 1: only one choice per request is supported, got ${describeValue(got)}.`,
  topLogprobsNeedsLogprobs: (param: string) => `'${param}' requires 'logprobs' to be true.`,
  maxTokensConflict: (param: string) =>
    `'${param}' and 'max_tokens' are aliases and were given different values; send only one of them.`,
  unsupportedContentPart: (param: string, got: unknown) =>
    `'${param}' must be "text": only text content parts are supported, got ${typeof got === 'string' ? quoteValue(got) : describeValue(got)}.`,

  // response_format and tools: the JSON-schema subset (json-schema-subset.ts, docs/structured-output.md).
  schemaKeywordRefused: (param: string, keyword: string, why: string) =>
    `'${param}': the JSON-schema keyword ${quoteValue(keyword)} cannot be enforced: ${why}. See docs/structured-output.md for the keywords that are.`,
  schemaKeywordUnknown: (param: string, keyword: string) =>
    `'${param}': ${quoteValue(keyword)} is not a JSON-schema keyword this service enforces, and none is ignored; remove it or use one that is (docs/structured-output.md).`,
  schemaNotAlone: (param: string, keyword: string, alone: string) =>
    `'${param}': ${quoteValue(keyword)} cannot stand next to ${quoteValue(alone)}, which is enforced only on its own (with annotations${alone === 'enum' || alone === 'const' ? ' and "type"' : ''}); move it into the schemas ${quoteValue(alone)} names.`,
  schemaNotTogether: (param: string, keyword: string, other: string) =>
    `'${param}': ${quoteValue(keyword)} cannot be enforced together with ${quoteValue(other)} in one schema; keep one of them.`,
  schemaValueNotOfType: (param: string, type: string) => `'${param}' is not of the schema's type (${type}).`,
  schemaDuplicate: (param: string, name: string) => `'${param}': ${quoteValue(name)} is listed twice.`,
  schemaPropertyName: (param: string) =>
    `'${param}': a property name with '"', '\\' or a control character cannot be enforced; rename the property.`,
  schemaRequiredNotAProperty: (param: string, name: string) =>
    `'${param}': the required property ${quoteValue(name)} is not in 'properties'; declare it there.`,
  schemaPattern: (param: string, why: string) => `'${param}' cannot be enforced: ${why}.`,
  schemaFormat: (param: string, got: string, enforced: readonly string[]) =>
    `'${param}': the format ${quoteValue(got)} is not enforced; the enforced formats are ${enforced.map((f) => quoteValue(f)).join(', ')} (or use a "pattern").`,
  schemaBoundNeedsInteger: (param: string, keyword: string) =>
    `'${param}': ${quoteValue(keyword)} is enforced only in a schema whose "type" is "integer" (or a list with "integer" and without "number").`,
  schemaIntegerRange: (param: string, why: string) =>
    `'${param}': this integer range cannot be enforced: ${why}. Give both ends, or use an "enum".`,
  schemaRef: (param: string, ref: string) =>
    `'${param}': the reference ${quoteValue(ref)} cannot be enforced: only references inside the same schema are ("#", "#/$defs/<name>", "#/definitions/<name>", or any JSON pointer such as "#/properties/a/items", at any depth, recursion included); external references are not fetched.`,
  schemaRefMissing: (param: string, ref: string) => `'${param}': the reference ${quoteValue(ref)} names no schema: nothing at that pointer inside this schema is a schema.`,
  schemaDefsNotAtRoot: (param: string, keyword: string) =>
    `'${param}': ${quoteValue(keyword)} is read only at the schema's root; move these definitions there.`,
  schemaCompile: (param: string, why: string) => `'${param}' could not be compiled into a grammar: ${why}.`,
  schemaTooComplex: (param: string, why: string) => `'${param}' is too complex to compile into a grammar: ${why}. Simplify that part of the schema (fewer alternatives, smaller bounds) and send the request again.`,

  // tools and tool_choice.
  toolNameTaken: (param: string, name: string) => `'${param}': a tool named ${quoteValue(name)} is already given; tool names must be unique.`,
  toolChoiceNeedsTools: (param: string, choice: string) => `'${param}' is ${quoteValue(choice)}, but the request gives no 'tools'.`,
  toolChoiceUnknown: (param: string, name: string, names: readonly string[]) =>
    `'${param}' names the tool ${quoteValue(name)}, which is not in 'tools' (${names.map((n) => quoteValue(n)).join(', ')}).`,
  nameFormat: (param: string, got: string) =>
    `'${param}' must be 1 to 64 characters of a-z, A-Z, 0-9, "_" and "-", got ${quoteValue(got)}.`,
  toolCallsContent: (param: string) => `'${param}' must be null, absent or a string when the message carries tool_calls.`,

  // OpenAI's Decisions shape (POST /v1/decisions).
  imagePartUnsupported: (param: string) =>
    `'${param}' is an input_image part: the loaded model reads text only. Describe the image in an input_text part instead.`,
  duplicateInList: (param: string, what: string, first: string) => `'${param}' repeats ${what} of '${first}'; each must be unique.`,
  unknownCallId: (param: string, callId: string) =>
    `'${param}' is ${quoteValue(callId)}, but no earlier function_call or custom_tool_call in 'input' has that call_id.`,
} as const;

/**
 * Why each refused JSON-schema keyword cannot be enforced (json-schema-subset.ts). The grammar
 * engine is @mlc-ai/web-xgrammar 0.1.27; "ignores" means it compiles the keyword and enforces
 * nothing of it, so output would not validate.
 */
export const refusedSchemaKeywords = {
  multipleOf: 'the grammar engine ignores it',
  uniqueItems: 'uniqueness across items cannot be enforced token by token (uniqueItems: false is fine)',
  not: 'the grammar engine ignores it',
  if: 'conditional schemas are not enforced; use anyOf',
  then: 'conditional schemas are not enforced; use anyOf',
  else: 'conditional schemas are not enforced; use anyOf',
  allOf: 'intersections are not enforced; merge the schemas into one',
  oneOf: 'the grammar engine treats it as anyOf, so exclusivity would not be enforced; use anyOf',
  dependentRequired: 'the grammar engine ignores it',
  dependentSchemas: 'the grammar engine ignores it',
  dependencies: 'the grammar engine ignores it',
  contains: 'the grammar engine enforces it wrongly',
  minContains: 'the grammar engine ignores it',
  maxContains: 'the grammar engine ignores it',
  patternProperties: 'the grammar engine enforces it wrongly',
  propertyNames: 'not enforced; list the names in properties',
  unevaluatedProperties: 'not enforced; use additionalProperties',
  unevaluatedItems: 'not enforced; use items',
  nullable: "OpenAPI's nullable is not JSON Schema; use \"type\": [T, \"null\"]",
  $anchor: 'only references to $defs are enforced',
  $dynamicRef: 'only references to $defs are enforced',
  $dynamicAnchor: 'only references to $defs are enforced',
  $recursiveRef: 'only references to $defs are enforced',
  $recursiveAnchor: 'only references to $defs are enforced',
} as const;

/** Why bounds on a schema whose type includes "number" are refused. */
export const numberBoundsReason =
  'bounds on non-integer numbers are enforced wrongly by the grammar engine; use "type": "integer" with both ends, or an enum';

export type ValidationMessages = typeof validationMessages;
export type MessageKind = keyof ValidationMessages;
/** The arguments a message takes after `param`. */
export type MessageArgs<K extends MessageKind> = ValidationMessages[K] extends (param: string, ...args: infer A) => string ? A : never;

export function validationMessage<K extends MessageKind>(kind: K, param: string, args: MessageArgs<K>): string {
  const build = validationMessages[kind] as (param: string, ...args: readonly unknown[]) => string;
  return build(param, ...args);
}

/** Messages of errors that name no field (transport, engine, service). */
export const errorMessages = {
  bodyNotObject: (got: unknown) => `The request body must be a JSON object, got ${describeValue(got)}.`,
  invalidJson: (detail?: string) => `The request body is not valid JSON${detail ? `: ${detail}` : '.'}`,
  unsupportedMediaType: (got: string | null) =>
    `The request body must be JSON (Content-Type: application/json), got ${got === null ? 'no Content-Type' : quoteValue(got)}.`,
  payloadTooLarge: (max: number) => `The request body is too large: at most ${max} bytes are allowed.`,
  notFound: (path: string) => `No route matches ${quoteValue(path, 200)}.`,
  methodNotAllowed: (method: string, allowed: readonly string[]) =>
    `The method ${method} is not allowed here; use ${allowed.join(' or ')}.`,
  unauthorized: () => 'The Authorization header is missing or does not hold the configured API key (Bearer <API_KEY>).',
  hostNotAllowed: (host: string | null) =>
    `This server does not answer for the host ${host === null ? '(none: no Host header)' : quoteValue(host, 200)}: it answers for localhost, the loopback addresses, the address it is bound to, and the names given with --allowed-host.`,
  originNotAllowed: (origin: string) =>
    `Pages from ${quoteValue(origin, 200)} may not call this server: only the origins given with --cors-origin may.`,
  modelNotFound: (model: string) => `The model ${quoteValue(model)} does not exist or is not loaded.`,
  contextLengthExceeded: (tokens: number, max: number) =>
    `The request needs ${tokens} tokens but the model's context holds ${max}.`,
  aborted: () => 'The request was aborted.',
  queueFull: (waiting: number, retryAfterS: number) =>
    `The engine is busy: ${waiting} request${waiting === 1 ? ' is' : 's are'} already waiting, the most it queues (limits.maxQueued). Send it again in ${retryAfterS} s (Retry-After).`,
  unknownFault: () => 'The engine failed for an unknown reason.',
  backendUnavailable: (backend: string, url: string, reason: string, retryAfterS: number) =>
    `The ${backend} server at ${url} is unavailable (${reason}). Send the request again in ${retryAfterS} s (Retry-After).`,
  backendTimeout: (backend: string, url: string, ms: number) =>
    `The ${backend} server at ${url} did not answer within ${ms} ms (--timeout-ms).`,
  backendBadReply: (backend: string, path: string, what: string) =>
    `The ${backend} server's reply to ${path} is not what it should be: ${what}.`,
  backendRefused: (backend: string, path: string, status: number, message: string) =>
    `The ${backend} server refused ${path} with status ${status}: ${message}`,
  tokenizerMismatch: (backend: string, probe: string, ours: readonly number[], theirs: readonly number[]) =>
    `The ${backend} server tokenizes differently from the tokenizer of --model/--host, so decisions would not be the ones the browser computes. The probe text ${JSON.stringify(probe)} gives [${ours.join(', ')}] here and [${theirs.join(', ')}] there: serve the same model (and revision) on both.`,
  unreadableErrorBody: (status?: number) =>
    `The service answered${status === undefined ? '' : ` with status ${status}`} without a readable error body.`,
} as const;

/** Messages of the response schemas (checks of what the engine produced). */
export const responseCheckMessages = {
  probabilitiesSum: (tolerance: number) => `probabilities must sum to 1 (within ${tolerance})`,
  choiceNotAnOption: () => 'choice must be one of the keys of probabilities',
  probabilitiesNotLegend: () => 'probabilities must be keyed like the legend',
  scoreAboveTop: () => 'score must not exceed the highest grade index',
  totalTokens: () => 'total_tokens must equal prompt_tokens + completion_tokens',
  contentOrToolCalls: () => 'content may be null only when the message carries tool_calls',
  toolCallsFinish: () => 'finish_reason is "tool_calls" only when the message carries tool_calls, and a message with tool_calls ends in "tool_calls" (or "length", its last call cut)',
} as const;

/**
 * Messages of calibration profiles and prediction sets (our extensions: `calibration`,
 * `prediction_set`; docs/decisions.md). `param` is where the profile was named or given.
 */
export const profileMessages = {
  unresolvedId: (param: string, id: string) =>
    `'${param}' names the calibration profile ${quoteValue(id)}, which this engine does not know: a profile id is resolved by the client that saved the profile (client.calibration.save). Call through that client, or send the profile itself inline.`,
  unknownId: (param: string, id: string, saved: readonly string[]) =>
    `'${param}' names the calibration profile ${quoteValue(id)}, which is not saved in this client; saved: ${saved.length === 0 ? 'none' : saved.map((s) => quoteValue(s)).join(', ')}. Save it first with client.calibration.save(profile), or send the profile itself inline.`,
  modelMismatch: (param: string, id: string, profileModel: string, model: string) =>
    `'${param}': the calibration profile ${quoteValue(id)} was fitted on the model version ${quoteValue(profileModel, 200)}, but this request is served by ${quoteValue(model, 200)}; a profile applies only to the model version it was fitted on.`,
  calibrateMismatch: (param: string, id: string, profileCalibrate: boolean, calibrate: boolean) =>
    `'${param}': the calibration profile ${quoteValue(id)} was fitted on answers with calibrate ${profileCalibrate}, but the request has calibrate ${calibrate}; send calibrate: ${profileCalibrate}, or use a profile fitted with calibrate ${calibrate}.`,
  questionMissing: (param: string, id: string, key: string) =>
    `'${param}': the calibration profile ${quoteValue(id)} has no entry for the question ${quoteValue(key)}: it holds only the questions it was fitted on, with the same type, instructions and criteria.`,
  answersDiffer: (param: string, id: string, key: string, profileAnswers: readonly string[], answers: readonly string[]) =>
    `'${param}': the calibration profile ${quoteValue(id)} was fitted for the question ${quoteValue(key)} with the answers ${profileAnswers.map((a) => quoteValue(a)).join(', ')}, but the question has the answers ${answers.map((a) => quoteValue(a)).join(', ')}.`,
  fitNeedsTwoAnswers: (param: string, id: string, key: string, answers: number) =>
    `'${param}': the calibration profile ${quoteValue(id)} fits the question ${quoteValue(key)} with Platt scaling, which takes two answers; the question has ${answers}.`,
  noConformalScores: (param: string, id: string, key: string) =>
    `'${param}': the calibration profile ${quoteValue(id)} has no conformal scores for the question ${quoteValue(key)}: prediction sets need a profile fitted with held-out labelled items of that question.`,
  predictionSetNeedsProfile: (param: string) =>
    `'${param}' is missing: prediction sets need a calibration profile with conformal scores; give 'prediction_set.profile' or 'calibration' (the id of a profile saved in the client, or the profile itself).`,
} as const;
