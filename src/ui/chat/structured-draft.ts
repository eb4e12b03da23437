import { NAME_PATTERN, responseFormatTypes, toolChoiceModes, type ToolChoice } from '../../contract/index.ts';
import { isBoolean, isRecord, isString } from '../state/stored-signal.ts';

export type FormatKind = (typeof responseFormatTypes)[number];

/** One function tool as typed: its parameters are JSON text, kept as typed even when invalid. */
export interface ToolDraft {
  id: string;
  name: string;
  description: string;
  parameters: string;
}

/**
 * The chat's structured-output and tool settings as typed. `toolChoice` is `auto`, `none`,
 * `required`, or `function:<name>` for one named tool.
 */
export interface StructuredDraft {
  format: FormatKind;
  schemaName: string;
  schema: string;
  tools: ToolDraft[];
  toolChoice: string;
  parallelToolCalls: boolean;
}

export const DEFAULT_STRUCTURED: StructuredDraft = {
  format: 'text',
  schemaName: '',
  schema: '',
  tools: [],
  toolChoice: 'auto',
  parallelToolCalls: true,
};

export const FORMAT_KINDS: readonly FormatKind[] = responseFormatTypes;

const isToolDraft = (x: unknown): x is ToolDraft =>
  isRecord(x) && ['id', 'name', 'description', 'parameters'].every((k) => isString(x[k]));

export const isStructuredDraft = (x: unknown): x is StructuredDraft =>
  isRecord(x) &&
  FORMAT_KINDS.includes(x['format'] as FormatKind) &&
  isString(x['schemaName']) &&
  isString(x['schema']) &&
  Array.isArray(x['tools']) &&
  x['tools'].every(isToolDraft) &&
  isString(x['toolChoice']) &&
  ((toolChoiceModes as readonly string[]).includes(x['toolChoice']) || x['toolChoice'].startsWith('function:')) &&
  isBoolean(x['parallelToolCalls']);

/** A JSON schema as typed: the object, or what is wrong with the text (empty text: `empty`). */
export type SchemaText = { ok: true; value: Record<string, unknown> } | { ok: false; error: string; empty: boolean };

export function readSchemaText(text: string): SchemaText {
  if (text.trim() === '') return { ok: false, error: 'Write a JSON schema here (or load an example).', empty: true };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}`, empty: false };
  }
  if (!isRecord(value)) return { ok: false, error: 'A JSON schema is an object: { "type": …, … }.', empty: false };
  return { ok: true, value };
}

/** Problems the page sees itself; the request is not sent while there is one. */
export interface StructuredErrors {
  format?: string | undefined;
  schemaName?: string | undefined;
  schema?: string | undefined;
  /** About the tool list as a whole (`tools`). */
  tools?: string | undefined;
  /** By tool draft id. */
  tool?: Record<string, Partial<Record<'name' | 'description' | 'parameters' | 'other', string>>>;
  toolChoice?: string | undefined;
  parallelToolCalls?: string | undefined;
}

export function hasStructuredErrors(e: StructuredErrors): boolean {
  const { tool, ...rest } = e;
  return Object.values(rest).some(Boolean) || Object.values(tool ?? {}).some((t) => Object.values(t).some(Boolean));
}

function nameProblem(name: string, what: string): string | undefined {
  if (name.trim() === '') return `Give the ${what} a name.`;
  if (!NAME_PATTERN.test(name)) return `The ${what} name may hold only letters, digits, _ and - (at most 64).`;
  return undefined;
}

/** The selected named tool of a `function:<name>` choice, else null. */
export function namedChoice(choice: string): string | null {
  return choice.startsWith('function:') ? choice.slice('function:'.length) : null;
}

/** What keeps the request from being sent, by field. */
export function structuredProblems(d: StructuredDraft): StructuredErrors {
  const errors: StructuredErrors = {};
  if (d.format === 'json_schema') {
    errors.schemaName = nameProblem(d.schemaName, 'schema');
    const schema = readSchemaText(d.schema);
    if (!schema.ok) errors.schema = schema.error;
  }
  const tool: NonNullable<StructuredErrors['tool']> = {};
  const seen = new Set<string>();
  for (const t of d.tools) {
    const problems: Partial<Record<'name' | 'parameters', string>> = {};
    const name = nameProblem(t.name, 'tool');
    if (name) problems.name = name;
    else if (seen.has(t.name)) problems.name = `Another tool is already named "${t.name}"; names must differ.`;
    seen.add(t.name);
    if (t.parameters.trim() !== '') {
      const params = readSchemaText(t.parameters);
      if (!params.ok) problems.parameters = params.error;
    }
    if (Object.keys(problems).length > 0) tool[t.id] = problems;
  }
  if (Object.keys(tool).length > 0) errors.tool = tool;
  const named = namedChoice(d.toolChoice);
  if (d.tools.length > 0 && named !== null && !d.tools.some((t) => t.name === named)) {
    errors.toolChoice = `No tool is named "${named}" any more: choose another.`;
  }
  return errors;
}

/** The request fields of the draft (only those that differ from sending none); assumes no problems. */
export function structuredFields(d: StructuredDraft): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (d.format === 'json_object') fields['response_format'] = { type: 'json_object' };
  if (d.format === 'json_schema') {
    const schema = readSchemaText(d.schema);
    fields['response_format'] = {
      type: 'json_schema',
      json_schema: { name: d.schemaName, schema: schema.ok ? schema.value : {} },
    };
  }
  if (d.tools.length > 0) {
    fields['tools'] = d.tools.map((t) => {
      const params = readSchemaText(t.parameters);
      return {
        type: 'function' as const,
        function: {
          name: t.name,
          ...(t.description.trim() !== '' ? { description: t.description } : {}),
          ...(params.ok ? { parameters: params.value } : {}),
        },
      };
    });
    const named = namedChoice(d.toolChoice);
    const choice: ToolChoice = named !== null ? { type: 'function', function: { name: named } } : (d.toolChoice as (typeof toolChoiceModes)[number]);
    fields['tool_choice'] = choice;
    fields['parallel_tool_calls'] = d.parallelToolCalls;
  }
  return fields;
}

/** Whether a reply to this draft is JSON text. */
export function expectsJson(d: StructuredDraft): boolean {
  return d.format !== 'text';
}

/**
 * The errors of a request that still apply to the draft as it is now: an error about a field is
 * dropped once that field is edited (the engine's words were about what was sent, not what is
 * typed since), so that a stale refusal never sits beside a schema it no longer describes.
 */
export function errorsStillApplying(errors: StructuredErrors, sent: StructuredDraft, now: StructuredDraft): StructuredErrors {
  const same = <K extends keyof StructuredDraft>(k: K) => sent[k] === now[k];
  const tool: NonNullable<StructuredErrors['tool']> = {};
  for (const [id, e] of Object.entries(errors.tool ?? {})) {
    const before = sent.tools.find((t) => t.id === id);
    const after = now.tools.find((t) => t.id === id);
    if (!before || !after) continue;
    const kept = Object.fromEntries(
      Object.entries(e).filter(([part]) => (part === 'other' ? JSON.stringify(before) === JSON.stringify(after) : before[part as 'name'] === after[part as 'name'])),
    );
    if (Object.keys(kept).length > 0) tool[id] = kept;
  }
  return {
    format: same('format') ? errors.format : undefined,
    schemaName: same('schemaName') ? errors.schemaName : undefined,
    schema: same('schema') ? errors.schema : undefined,
    tools: same('tools') ? errors.tools : undefined,
    tool,
    toolChoice: same('toolChoice') ? errors.toolChoice : undefined,
    parallelToolCalls: same('parallelToolCalls') ? errors.parallelToolCalls : undefined,
  };
}
