/**
 * Examples for the chat's structured output and tools, loaded in one click. They use only the
 * schema keywords the engine enforces (docs/structured-output.md): type, properties, required,
 * additionalProperties false, enum, integer minimum/maximum over a range of at most 1000,
 * maxLength, maxItems and anyOf.
 */
export interface SchemaExample {
  id: string;
  label: string;
  name: string;
  schema: Record<string, unknown>;
}

export const SCHEMA_EXAMPLES: readonly SchemaExample[] = [
  {
    id: 'contact',
    label: 'Contact card',
    name: 'contact_card',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 60 },
        email: { type: 'string', maxLength: 80 },
        age: { type: 'integer', minimum: 0, maximum: 120 },
      },
      required: ['name', 'email', 'age'],
      additionalProperties: false,
    },
  },
  {
    id: 'sentiment',
    label: 'Sentiment',
    name: 'sentiment',
    schema: {
      type: 'object',
      properties: {
        label: { type: 'string', enum: ['positive', 'neutral', 'negative'] },
        confidence: { type: 'integer', minimum: 0, maximum: 100 },
      },
      required: ['label', 'confidence'],
      additionalProperties: false,
    },
  },
  {
    id: 'tags',
    label: 'Up to 3 tags',
    name: 'tags',
    schema: {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string', maxLength: 20 }, maxItems: 3 },
      },
      required: ['tags'],
      additionalProperties: false,
    },
  },
];

export const EXAMPLE_TOOL = {
  name: 'get_weather',
  description: 'The current weather in a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', maxLength: 40 },
      unit: { type: 'string', enum: ['c', 'f'] },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
} as const;

/** A schema as the editor shows it. */
export function schemaText(schema: unknown): string {
  return JSON.stringify(schema, null, 2);
}
