/**
 * ajv for the draft a schema declares with `$schema` (none: 2020-12, the engine's default), each
 * with ajv-formats: Ajv2020, Ajv2019, Ajv (draft-07, and draft-06 through its meta-schema) and
 * ajv-draft-04. `multipleOfPrecision: 9`: JSON Schema defines `multipleOf` in exact decimal
 * arithmetic, which the engine enforces; ajv's default divides in floating point and refuses exact
 * multiples such as 19.99 of 0.01 (docs/structured-output.md, `multipleOf`).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';

const OPTIONS = { strict: false, multipleOfPrecision: 9 } as const;

type Validator = { compile(schema: object): ValidateFunction };

function withFormats<T extends Validator>(ajv: T): T {
  addFormats(ajv as never);
  return ajv;
}

const validators = {
  '2020-12': withFormats(new Ajv2020(OPTIONS)),
  '2019-09': withFormats(new Ajv2019(OPTIONS)),
  'draft-07': withFormats(new Ajv(OPTIONS)),
  'draft-06': (() => {
    const ajv = withFormats(new Ajv(OPTIONS));
    ajv.addMetaSchema(draft06);
    return ajv;
  })(),
  'draft-04': withFormats(new AjvDraft04(OPTIONS)),
} as const;

/** The draft `$schema` names (by its URI's draft part); 2020-12 where none. */
export function draftOf(schema: object): keyof typeof validators {
  const uri = (schema as { $schema?: unknown }).$schema;
  if (typeof uri !== 'string') return '2020-12';
  for (const d of ['draft-04', 'draft-06', 'draft-07', '2019-09', '2020-12'] as const) if (uri.includes(d)) return d;
  throw new Error(`draftOf: unknown $schema ${uri}`);
}

/** A validator of `schema` under its own draft. */
export function validatorFor(schema: object): ValidateFunction {
  return validators[draftOf(schema)].compile(schema);
}
