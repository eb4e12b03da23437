/**
 * Hard limits of the request contract. Every one is enforced by the parsers in this folder and
 * answered with `invalid_request` (400) naming the field; none of them is a model's token limit
 * (that one is checked by the engine, which answers `context_length_exceeded`, 422).
 */
export const limits = {
  /** Questions in one decision request. */
  maxQuestions: 256,
  /** Questions in one request of OpenAI's Decisions shape (`POST /v1/decisions`): OpenAI's own limit, served in requests of `maxQuestions`. */
  maxOpenAIDecisionQuestions: 400,
  /** Options of one `choice` question (the Jev service allows 2–255). */
  maxOptions: 255,
  /** Fewest options of one `choice` question. */
  minOptions: 2,
  /** Fewest grade labels of one `score` question. */
  minGrades: 2,
  /**
   * Most grade labels of one `score` question. The Jev service allows 2–10 levels; we allow up
   * to 101 so that 0–100 scales work (0–10, eleven grades, is the common case).
   */
  maxGrades: 101,
  /** Characters of the rendered decision `state`. */
  maxStateChars: 1_000_000,
  /** Characters of a question key, an option key, or the chat `model` id. */
  maxKeyChars: 1024,
  /** Characters of one instruction, description, grade label, or stop sequence. */
  maxTextChars: 100_000,
  /** Nesting depth of a JSON `state` (the Jev service's own limit): `{}` is depth 1. */
  maxDepth: 64,
  /** Messages in one chat completion request. */
  maxMessages: 10_000,
  /** Characters of one chat message's content. */
  maxMessageChars: 1_000_000,
  /** Stop sequences in one chat completion request (OpenAI's limit). */
  maxStop: 4,
  /** Largest `top_logprobs` (OpenAI's limit). */
  maxTopLogprobs: 20,
  /** Function tools in one chat completion request (OpenAI's limit). */
  maxTools: 128,
  /** The largest count of a quantifier (`{n}`, `{n,m}`) in a response schema's `pattern`: each repeat is a copy in the grammar. */
  maxPatternRepeat: 256,
  /**
   * Levels of objects and arrays in a whole request body (body-bounds.ts): above every field's own
   * limit (a `state` of `maxDepth` levels sits two levels down), below what any recursive walk of the
   * body (structured clone, zod) can overflow on.
   */
  maxBodyDepth: 128,
  /**
   * Values (object members and array items) in a whole request body (body-bounds.ts): 2^24, more
   * than a 32 MiB HTTP body can carry (each value takes at least two bytes of JSON).
   */
  maxBodyNodes: 16_777_216,
  /** Bytes of one HTTP request body (the Jev service's own limit, 32 MiB): more gets 413. */
  maxBodyBytes: 32 * 1024 * 1024,
} as const;

export type Limits = typeof limits;
