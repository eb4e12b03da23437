/**
 * Function tools, OpenAI's shape: `tools` (at most `limits.maxTools`, names unique),
 * `tool_choice` ("none", "auto", "required", or `{type:"function", function:{name}}` naming one of
 * the tools) and `parallel_tool_calls`. A tool's `parameters` is a JSON schema within the subset
 * the engine enforces (json-schema-subset.ts), checked like a response schema; omitted, it is a
 * function without parameters (`{type:"object", properties:{}}`).
 */
import './zod-config.ts';
import { z } from 'zod';
import type { JsonSchema } from './json-schema-subset.ts';
import { limits } from './limits.ts';
import { readDescription, readFlag, readName, readSchema } from './response-format.ts';
import { addIssue, isPlainObject, lengthBetween } from './validation.ts';

export interface ChatTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters: JsonSchema;
    /** OpenAI's switch; false when omitted or null. */
    strict: boolean;
  };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export const toolChoiceModes = ['none', 'auto', 'required'] as const;

/** The parameters of a function that takes none. */
export const NO_PARAMETERS: JsonSchema = Object.freeze({ type: 'object', properties: {} }) as JsonSchema;

export const toolsSchema = z.custom<unknown>().optional().transform((raw: unknown, ctx): ChatTool[] => {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    addIssue(ctx, 'wrongType', ['an array of tools', raw]);
    return z.NEVER;
  }
  if (!lengthBetween(ctx, raw.length, 0, limits.maxTools, 'tools')) return z.NEVER;
  const tools: ChatTool[] = [];
  const names = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const tool: unknown = raw[i];
    if (!isPlainObject(tool)) {
      addIssue(ctx, 'wrongType', ['a tool object', tool], { path: [i] });
      return z.NEVER;
    }
    if (tool['type'] !== 'function') {
      if (tool['type'] === undefined) addIssue(ctx, 'required', [], { path: [i, 'type'] });
      else addIssue(ctx, 'oneOf', [['function'], tool['type']], { path: [i, 'type'] });
      return z.NEVER;
    }
    const fn = tool['function'];
    if (!isPlainObject(fn)) {
      if (fn === undefined) addIssue(ctx, 'required', [], { path: [i, 'function'] });
      else addIssue(ctx, 'wrongType', ['an object', fn], { path: [i, 'function'] });
      return z.NEVER;
    }
    const at = (k: string) => [i, 'function', k];
    const name = readName(fn['name'], ctx, at('name'));
    if (name === undefined) return z.NEVER;
    if (names.has(name)) {
      addIssue(ctx, 'toolNameTaken', [name], { path: at('name') });
      return z.NEVER;
    }
    names.add(name);
    const description = readDescription(fn['description'], ctx, at('description'));
    const strict = readFlag(fn['strict'], ctx, at('strict'));
    const parameters = fn['parameters'] === undefined || fn['parameters'] === null ? NO_PARAMETERS : readSchema(fn['parameters'], ctx, at('parameters'));
    if (description === false || strict === undefined || parameters === undefined) return z.NEVER;
    const entry: ChatTool = { type: 'function', function: { name, parameters, strict } };
    if (description !== null) entry.function.description = description;
    tools.push(entry);
  }
  return tools;
});

/** `tool_choice` as given (null: undefined); whether it fits the tools is the request's check. */
export const toolChoiceSchema = z.custom<unknown>().optional().transform((raw: unknown, ctx): ToolChoice | undefined => {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') {
    if ((toolChoiceModes as readonly string[]).includes(raw)) return raw as ToolChoice;
    addIssue(ctx, 'oneOf', [toolChoiceModes, raw]);
    return z.NEVER;
  }
  if (!isPlainObject(raw)) {
    addIssue(ctx, 'wrongType', ['"none", "auto", "required" or {"type":"function","function":{"name":…}}', raw]);
    return z.NEVER;
  }
  if (raw['type'] !== 'function') {
    if (raw['type'] === undefined) addIssue(ctx, 'required', [], { path: ['type'] });
    else addIssue(ctx, 'oneOf', [['function'], raw['type']], { path: ['type'] });
    return z.NEVER;
  }
  const fn = raw['function'];
  if (!isPlainObject(fn)) {
    if (fn === undefined) addIssue(ctx, 'required', [], { path: ['function'] });
    else addIssue(ctx, 'wrongType', ['an object', fn], { path: ['function'] });
    return z.NEVER;
  }
  const name = readName(fn['name'], ctx, ['function', 'name']);
  if (name === undefined) return z.NEVER;
  return { type: 'function', function: { name } };
});
