/** The person schema the structured-output tests ask for, in Node (test/engine) and in Chromium (e2e): a bounded string, an integer range, an enum, a nullable date, a short list. */
import type { JsonSchema } from '../../src/contract/index.ts';

export const PERSON_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 8 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    role: { enum: ['admin', 'user', 'guest'] },
    since: { type: ['string', 'null'], format: 'date' },
    tags: { type: 'array', items: { type: 'string', maxLength: 4 }, maxItems: 2 },
  },
  required: ['name', 'age', 'role', 'since', 'tags'],
  additionalProperties: false,
};
