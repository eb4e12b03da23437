/**
 * How a model writes a tool call, by its chat template (docs/structured-output.md, "Tool calls"):
 *
 * - **hermes** (Qwen2.5, Qwen3: the template renders `tools` and mentions `<tool_call>`): each call
 *   is `<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call>`, calls one after another
 *   with a newline between them.
 * - **llama3-json** (Llama 3.1–3.2: the template renders `tools` and has the `ipython` role): the
 *   reply is one call, `{"name": "NAME", "parameters": {…}}`. The template renders one call per
 *   assistant turn, so parallel calls are not offered.
 * - **fallback** (a template that ignores `tools` — Gemma 3, Phi-3.5, SmolLM2 — or no template,
 *   TinyStories): the hermes format, taught by a system text of our own (tool-prompt.ts).
 *
 * Arguments are one line of JSON with ", " and ": " between items, as the templates' own
 * `tojson` writes them.
 */
import type { ChatTool } from '../../contract/index.ts';
import type { TaggedCall, ToolCallFormat } from '../grammar/backend.ts';

export type ToolStyle = 'hermes' | 'llama3-json' | 'fallback';

/** The style a chat template writes tool calls in. */
export function toolStyleOf(template: string | null): ToolStyle {
  if (template === null || !/\btools\b/.test(template)) return 'fallback';
  if (template.includes('<tool_call>')) return 'hermes';
  if (template.includes('ipython')) return 'llama3-json';
  return 'fallback';
}

/** The text around one tool's arguments. */
export function callTags(style: ToolStyle, name: string): { begin: string; end: string } {
  const quoted = JSON.stringify(name);
  if (style === 'llama3-json') return { begin: `{"name": ${quoted}, "parameters": `, end: '}' };
  return { begin: `<tool_call>\n{"name": ${quoted}, "arguments": `, end: '}\n</tool_call>' };
}

/** What opens a call in free text. */
export function callTriggers(style: ToolStyle): string[] {
  return style === 'llama3-json' ? ['{"name": '] : ['<tool_call>'];
}

/** Whether the style writes several calls in one reply. */
export function allowsParallelCalls(style: ToolStyle): boolean {
  return style !== 'llama3-json';
}

export interface ToolCallPlan {
  style: ToolStyle;
  /** The tools the reply may call (one, where tool_choice names it), with their tags. */
  calls: (TaggedCall & { name: string })[];
  forced: boolean;
  single: boolean;
}

/** What a request with tools lets the reply call; null when it calls none (no tools, or tool_choice "none"). */
export function toolCallPlan(
  style: ToolStyle,
  tools: readonly ChatTool[],
  choice: 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } },
  parallel: boolean,
): ToolCallPlan | null {
  if (tools.length === 0 || choice === 'none') return null;
  const named = typeof choice === 'object' ? choice.function.name : null;
  const chosen = named === null ? tools : tools.filter((t) => t.function.name === named);
  return {
    style,
    calls: chosen.map((t) => ({ name: t.function.name, ...callTags(style, t.function.name), parameters: t.function.parameters })),
    forced: choice === 'required' || named !== null,
    single: !parallel || !allowsParallelCalls(style),
  };
}

/** The grammar of a plan (`answer`: the response format's schema where the reply may instead be that JSON). */
export function toolCallFormat(plan: ToolCallPlan, answer: ToolCallFormat['answer']): ToolCallFormat {
  return {
    type: 'tool_calls',
    calls: plan.calls.map(({ begin, parameters, end }) => ({ begin, parameters, end })),
    // Llama 3.x writes one call (single); xgrammar 0.1.27 refuses an empty separator all the same.
    separator: '\n',
    triggers: callTriggers(plan.style),
    forced: plan.forced,
    single: plan.single,
    answer,
  };
}
